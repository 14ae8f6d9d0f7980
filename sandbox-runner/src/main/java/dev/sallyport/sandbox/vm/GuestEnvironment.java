package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.internal.SandboxEnvironment;
import dev.sallyport.sandbox.internal.TrustFiles;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SequencedMap;

/**
 * Where things are in the guest, and its environment: the process backend's routing variables
 * ({@link SandboxEnvironment}), pointing at the proxy on the bridge gateway and at the trust files mounted at
 * {@link #GUEST_BUNDLE} and {@link #GUEST_TRUSTSTORE}; {@code HOME=/tmp} (the root file system is read-only). The
 * rest (PATH, ...) is the image's. Proxy variables are usability hints only: the network enforces the route, so a
 * tool that ignores them simply fails.
 */
public final class GuestEnvironment {

    /** Where the trust bundle (proxy CA + public roots) appears in the guest. */
    public static final String GUEST_BUNDLE = "/etc/sallyport/trust-bundle.pem";
    /** Where the PKCS12 trust store for JVMs appears in the guest. */
    public static final String GUEST_TRUSTSTORE = "/etc/sallyport/truststore.p12";
    /**
     * The file Fedora's {@code /etc/pki/tls/certs/ca-bundle.crt} and {@code /etc/pki/tls/cert.pem} both point to:
     * images where those links are gone (Fedora 42+ may drop the first) still read it.
     */
    public static final String FEDORA_EXTRACTED_BUNDLE = "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem";
    /**
     * Distribution bundle paths the trust bundle is also mounted over ({@link TrustFiles#SYSTEM_BUNDLES}, then
     * {@link #FEDORA_EXTRACTED_BUNDLE}).
     */
    public static final List<String> DISTRO_BUNDLES = java.util.stream.Stream.concat(
            TrustFiles.SYSTEM_BUNDLES.stream().map(Path::toString), java.util.stream.Stream.of(FEDORA_EXTRACTED_BUNDLE))
            .toList();
    /** Where the workspace is mounted and the workload starts. */
    public static final String WORKSPACE = "/workspace";

    private GuestEnvironment() {
    }

    /** The environment for {@code spec}, in a stable order; secrets (placeholders) come last, by name. */
    public static SequencedMap<String, String> of(NerdctlSpec spec) {
        SandboxEnvironment.Routing routing = new SandboxEnvironment.Routing(spec.network().gateway(),
                spec.network().proxyPort(), GUEST_BUNDLE,
                Optional.ofNullable(spec.javaTrustStore()).map(store -> GUEST_TRUSTSTORE));
        return SandboxEnvironment.build(Map.of("HOME", "/tmp"), List.of(), Map.of(), routing, spec.secrets());
    }
}
