package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.SandboxSpec;
import dev.sallyport.sandbox.net.Ipv4Subnet;
import dev.sallyport.sandbox.net.SandboxNetwork;
import dev.sallyport.sandbox.vm.GuestEnvironment;
import dev.sallyport.sandbox.vm.NerdctlSpec;
import dev.sallyport.sandbox.vm.UserIds;
import dev.sallyport.sandbox.vm.VmRuntime;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import org.junit.jupiter.api.Test;

/**
 * Both backends' environments come from one builder: the same routing variables in the same order, each backend
 * with its own base and its own places for the proxy and the trust files, and the same refusals.
 */
public class SandboxEnvironmentTest {

    /** Every variable both backends set to reach the proxy and trust its CA, in order. */
    public static final List<String> ROUTING = List.of(
            "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
            "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY",
            "GRPC_PROXY", "grpc_proxy", "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY",
            "NO_PROXY", "no_proxy", "npm_config_noproxy", "NODE_USE_ENV_PROXY",
            "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO",
            "CURL_CA_BUNDLE", "npm_config_cafile", "YARN_HTTPS_CA_FILE_PATH", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO",
            "DENO_CERT", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
            "JAVA_TOOL_OPTIONS");
    /** The process sandbox's own base, before the routing variables. */
    public static final List<String> PROCESS_BASE = List.of("PATH", "HOME", "TMPDIR", "TERM", "LANG");

    static final SandboxNetwork NETWORK = new SandboxNetwork("ab12cd34", Ipv4Subnet.parse("10.213.7.0/24"), 3128);

    @Test
    void bothBackendsSetTheSameRoutingVariablesInTheSameOrder() throws Exception {
        SequencedMap<String, String> process = SandboxEnvironment.forProcess(
                processSpec().placeholder("API_TOKEN", "ph-1").build(), SandboxEnvironment.DEFAULT_PATH,
                "/run/sallyport/ca-bundle.pem",
                "/run/sallyport/truststore.p12");
        SequencedMap<String, String> guest = GuestEnvironment.of(guestSpec().withSecrets(Map.of("API_TOKEN", "ph-1")));

        assertThat(process.keySet()).containsExactlyElementsOf(concat(PROCESS_BASE, ROUTING, List.of("API_TOKEN")));
        assertThat(guest.keySet()).containsExactlyElementsOf(concat(List.of("HOME"), ROUTING, List.of("API_TOKEN")));
        for (String name : SandboxEnvironment.PROXY_URL) {
            assertThat(process).containsEntry(name, "http://127.0.0.1:3128");
            assertThat(guest).containsEntry(name, "http://10.213.7.1:3128");
        }
        for (String name : SandboxEnvironment.CA_BUNDLE) {
            assertThat(process).containsEntry(name, "/run/sallyport/ca-bundle.pem");
            assertThat(guest).containsEntry(name, GuestEnvironment.GUEST_BUNDLE);
        }
        assertThat(process.get("JAVA_TOOL_OPTIONS")).isEqualTo("-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128"
                + " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.*|[::1]"
                + " -Djavax.net.ssl.trustStore=/run/sallyport/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12"
                + " -Djavax.net.ssl.trustStorePassword=sallyport");
        assertThat(guest.get("JAVA_TOOL_OPTIONS")).isEqualTo(process.get("JAVA_TOOL_OPTIONS")
                .replace("127.0.0.1 ", "10.213.7.1 ").replace("/run/sallyport/truststore.p12", GuestEnvironment.GUEST_TRUSTSTORE));
        assertThat(process).containsEntry("HOME", "/home/ann").containsEntry("TERM", "xterm-256color")
                .containsEntry("LANG", "C.UTF-8").containsEntry("API_TOKEN", "ph-1");
        assertThat(guest).containsEntry("HOME", "/tmp").containsEntry("API_TOKEN", "ph-1");
    }

    @Test
    void aPassedVariableMayReplaceTheBaseButNeverARoutingVariable() throws Exception {
        SandboxSpec passesPath = processSpec().passEnv("PATH").passEnv("ABSENT").build();
        assertThat(SandboxEnvironment.forProcess(passesPath, SandboxEnvironment.DEFAULT_PATH, "b", "p")).containsEntry("PATH", "/opt/host/bin")
                .doesNotContainKey("ABSENT");

        for (String routing : ROUTING) {
            if (routing.equals(SandboxEnvironment.MERGED)) {
                continue;
            }
            SandboxSpec spec = processSpec().passEnv(routing).build();
            assertThatThrownBy(() -> SandboxEnvironment.forProcess(spec, "/bin", "b", "p"))
                    .isInstanceOf(SandboxException.class)
                    .hasMessage("env " + routing + ": set by the sandbox to route traffic through the proxy "
                            + "(expected: a variable the sandbox does not set)");
        }
    }

    @Test
    void theHostsJavaOptionsComeFirstAndTheSandboxsWinAfterThem() throws Exception {
        SandboxSpec spec = processSpec().hostEnv(Map.of("JAVA_TOOL_OPTIONS", " -Dmy.flag=on -Dhttps.proxyHost=corp "))
                .passEnv("JAVA_TOOL_OPTIONS").build();
        String options = SandboxEnvironment.forProcess(spec, "/bin", "b", "p").get("JAVA_TOOL_OPTIONS");
        assertThat(options).startsWith("-Dmy.flag=on -Dhttps.proxyHost=corp -Dhttp.proxyHost=127.0.0.1 ")
                .endsWith(" -Djavax.net.ssl.trustStorePassword=sallyport");
        assertThat(options.lastIndexOf("-Dhttps.proxyHost=127.0.0.1")).isGreaterThan(options.indexOf("corp"));

        SandboxSpec absent = processSpec().passEnv("JAVA_TOOL_OPTIONS").build();
        assertThat(SandboxEnvironment.forProcess(absent, "/bin", "b", "p").get("JAVA_TOOL_OPTIONS"))
                .startsWith("-Dhttp.proxyHost=127.0.0.1 ");
    }

    @Test
    void aSecretMayReplaceNoVariableOfEitherBackend() {
        for (String name : concat(PROCESS_BASE, ROUTING, List.of())) {
            SandboxSpec spec = processSpec().placeholder(name, "ph").build();
            assertThatThrownBy(() -> SandboxEnvironment.forProcess(spec, "/bin", "b", "p"))
                    .isInstanceOf(SandboxException.class)
                    .hasMessage("secrets: '" + name + "' would replace a variable the sandbox needs (expected: "
                            + "another name)");
        }
        for (String name : concat(List.of("HOME"), ROUTING, List.of())) {
            assertThatThrownBy(() -> GuestEnvironment.of(guestSpec().withSecrets(Map.of(name, "ph"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("secrets: '" + name + "' would replace a variable the sandbox needs (expected: "
                            + "another name)");
        }
    }

    @Test
    void secretsComeLastByName() throws Exception {
        SandboxSpec spec = processSpec().placeholder("ZED", "z").placeholder("ALPHA", "a").placeholder("MID", "m")
                .build();
        List<String> names = new ArrayList<>(SandboxEnvironment.forProcess(spec, "/bin", "b", "p").keySet());
        assertThat(names.subList(names.size() - 3, names.size())).containsExactly("ALPHA", "MID", "ZED");
    }

    private static SandboxSpec.Builder processSpec() {
        return SandboxSpec.builder(List.of("true"), Path.of("/home/ann/project"),
                        new InetSocketAddress("127.0.0.1", 40000), new byte[0])
                .hostHome(Path.of("/home/ann"))
                .hostEnv(Map.of("TERM", "xterm-256color", "PATH", "/opt/host/bin", "HTTPS_PROXY", "http://corp:8080"));
    }

    private static NerdctlSpec guestSpec() {
        return NerdctlSpec.of(NETWORK, VmRuntime.KATA, "debian:12", List.of("true"), Path.of("/home/ann/project"),
                new UserIds(1000, 1000), Path.of("/run/sallyport/trust/b.pem"))
                .withJavaTrustStore(Path.of("/run/sallyport/trust/t.p12"));
    }

    private static List<String> concat(List<String> a, List<String> b, List<String> c) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        all.addAll(c);
        return all;
    }
}
