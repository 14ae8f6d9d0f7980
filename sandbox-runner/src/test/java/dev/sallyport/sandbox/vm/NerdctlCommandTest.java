package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.sandbox.net.Ipv4Subnet;
import dev.sallyport.sandbox.net.SandboxNetwork;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class NerdctlCommandTest {

    static final SandboxNetwork NETWORK = new SandboxNetwork("ab12cd34", Ipv4Subnet.parse("10.213.7.0/24"), 3128);
    static final NerdctlSpec SPEC = NerdctlSpec.of(NETWORK, VmRuntime.KATA, "debian:12", List.of("npm", "test"),
            Path.of("/home/ann/project"), new UserIds(1000, 1000), Path.of("/run/sallyport/ab12cd34/bundle.pem"));

    /** HOME, then the routing variables of both backends ({@code SandboxEnvironmentTest.ROUTING}), in order. */
    static final List<String> ENV = List.of(
            "-e", "HOME=/tmp",
            "-e", "HTTP_PROXY=http://10.213.7.1:3128",
            "-e", "HTTPS_PROXY=http://10.213.7.1:3128",
            "-e", "ALL_PROXY=http://10.213.7.1:3128",
            "-e", "http_proxy=http://10.213.7.1:3128",
            "-e", "https_proxy=http://10.213.7.1:3128",
            "-e", "all_proxy=http://10.213.7.1:3128",
            "-e", "npm_config_proxy=http://10.213.7.1:3128",
            "-e", "npm_config_https_proxy=http://10.213.7.1:3128",
            "-e", "YARN_HTTP_PROXY=http://10.213.7.1:3128",
            "-e", "YARN_HTTPS_PROXY=http://10.213.7.1:3128",
            "-e", "PIP_PROXY=http://10.213.7.1:3128",
            "-e", "GRPC_PROXY=http://10.213.7.1:3128",
            "-e", "grpc_proxy=http://10.213.7.1:3128",
            "-e", "BUNDLE_HTTP_PROXY=http://10.213.7.1:3128",
            "-e", "BUNDLE_HTTPS_PROXY=http://10.213.7.1:3128",
            "-e", "NO_PROXY=localhost,127.0.0.1,::1",
            "-e", "no_proxy=localhost,127.0.0.1,::1",
            "-e", "npm_config_noproxy=localhost,127.0.0.1,::1",
            "-e", "NODE_USE_ENV_PROXY=1",
            "-e", "SSL_CERT_FILE=/etc/sallyport/trust-bundle.pem",
            "-e", "NODE_EXTRA_CA_CERTS=/etc/sallyport/trust-bundle.pem",
            "-e", "REQUESTS_CA_BUNDLE=/etc/sallyport/trust-bundle.pem",
            "-e", "PIP_CERT=/etc/sallyport/trust-bundle.pem",
            "-e", "GIT_SSL_CAINFO=/etc/sallyport/trust-bundle.pem",
            "-e", "CURL_CA_BUNDLE=/etc/sallyport/trust-bundle.pem",
            "-e", "npm_config_cafile=/etc/sallyport/trust-bundle.pem",
            "-e", "YARN_HTTPS_CA_FILE_PATH=/etc/sallyport/trust-bundle.pem",
            "-e", "AWS_CA_BUNDLE=/etc/sallyport/trust-bundle.pem",
            "-e", "CARGO_HTTP_CAINFO=/etc/sallyport/trust-bundle.pem",
            "-e", "DENO_CERT=/etc/sallyport/trust-bundle.pem",
            "-e", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=/etc/sallyport/trust-bundle.pem",
            "-e", "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=10.213.7.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=10.213.7.1"
                    + " -Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.*|[::1]");

    static List<String> expectedPrefix(String name, String runtimeType, boolean tty) {
        List<String> argv = new ArrayList<>(List.of("nerdctl", "run", "--rm", "-i"));
        if (tty) {
            argv.add("-t");
        }
        argv.addAll(List.of(
                "--name", name,
                "--label", "dev.sallyport.sandbox=ab12cd34",
                "--runtime", runtimeType,
                "--network", "sallyport-ab12cd34",
                "--ip", "10.213.7.2",
                "--dns", "10.213.7.1",
                "--user", "1000:1000",
                "-w", "/workspace",
                "--read-only",
                "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=1g,mode=1777",
                "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges",
                "--pids-limit", "512",
                "--memory", "2g",
                "--cpus", "2",
                "--mount", "type=bind,src=/home/ann/project,dst=/workspace",
                "--mount", "type=bind,src=/run/sallyport/ab12cd34/bundle.pem,dst=/etc/sallyport/trust-bundle.pem,readonly",
                "--mount", "type=bind,src=/run/sallyport/ab12cd34/bundle.pem,dst=/etc/ssl/certs/ca-certificates.crt,readonly",
                "--mount", "type=bind,src=/run/sallyport/ab12cd34/bundle.pem,dst=/etc/pki/tls/certs/ca-bundle.crt,readonly",
                "--mount", "type=bind,src=/run/sallyport/ab12cd34/bundle.pem,dst=/etc/ssl/cert.pem,readonly",
                "--mount", "type=bind,src=/run/sallyport/ab12cd34/bundle.pem,"
                        + "dst=/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem,readonly"));
        return argv;
    }

    @Test
    void kataWorkloadArgvIsExact() {
        List<String> expected = expectedPrefix("sallyport-ab12cd34", "io.containerd.kata.v2", false);
        expected.addAll(ENV);
        expected.addAll(List.of("--", "debian:12", "npm", "test"));

        assertThat(NerdctlCommand.build(SPEC)).containsExactlyElementsOf(expected);
    }

    @ParameterizedTest
    @CsvSource({"kata,io.containerd.kata.v2", "runc,io.containerd.runc.v2", "runsc,io.containerd.runsc.v1",
            "KATA,io.containerd.kata.v2"})
    void runtimeNamesMapToContainerdRuntimeTypes(String name, String type) {
        NerdctlSpec spec = new NerdctlSpec(NETWORK, VmRuntime.parse(name), SPEC.image(), SPEC.command(),
                SPEC.workspace(), SPEC.user(), SPEC.trustBundle(), null, SPEC.secrets(), SPEC.limits(), false, "nerdctl");

        List<String> argv = NerdctlCommand.build(spec);

        assertThat(argv.get(argv.indexOf("--runtime") + 1)).isEqualTo(type);
    }

    @Test
    void unknownRuntimeIsRejectedWithTheChoices() {
        assertThatThrownBy(() -> VmRuntime.parse("qemu"))
                .hasMessage("runtime: 'qemu' (expected: one of kata, runc, runsc)");
    }

    @Test
    void ttySecretsTrustStoreAndLimitsAppearWhereExpected() {
        NerdctlSpec spec = SPEC.withSecrets(Map.of("GITHUB_TOKEN", "sallyport-placeholder-1", "A_KEY", "ph-2"))
                .withJavaTrustStore(Path.of("/run/sallyport/ab12cd34/trust.p12"))
                .with(new ResourceLimits(64, "512m", "1.5", "256m"), true, "/usr/local/bin/nerdctl");

        List<String> argv = NerdctlCommand.build(spec);

        assertThat(argv.subList(0, 5)).containsExactly("/usr/local/bin/nerdctl", "run", "--rm", "-i", "-t");
        assertThat(argv).containsSequence("--pids-limit", "64", "--memory", "512m", "--cpus", "1.5");
        assertThat(argv).containsSequence("--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=256m,mode=1777");
        assertThat(argv).containsSequence("--mount",
                "type=bind,src=/run/sallyport/ab12cd34/trust.p12,dst=/etc/sallyport/truststore.p12,readonly");
        assertThat(argv).contains("JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=10.213.7.1 -Dhttp.proxyPort=3128"
                + " -Dhttps.proxyHost=10.213.7.1 -Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.*|[::1]"
                + " -Djavax.net.ssl.trustStore=/etc/sallyport/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12"
                + " -Djavax.net.ssl.trustStorePassword=sallyport");
        int java = argv.indexOf(argv.stream().filter(a -> a.startsWith("JAVA_TOOL_OPTIONS=")).findFirst().orElseThrow());
        assertThat(argv.subList(java + 1, argv.size())).containsExactly(
                "-e", "A_KEY=ph-2", "-e", "GITHUB_TOKEN=sallyport-placeholder-1", "--", "debian:12", "npm", "test");
        assertThat(argv).doesNotContain("-p", "--publish", "--privileged", "--net=host");
    }

    @Test
    void probeRunsTheSameSandboxWithTheProbeScript() {
        List<String> expected = expectedPrefix("sallyport-ab12cd34-probe", "io.containerd.kata.v2", false);
        expected.addAll(ENV);
        expected.addAll(List.of("--entrypoint", "/bin/sh", "--", "debian:12", "-c",
                GuestProbe.script("10.213.7.1", 3128)));

        assertThat(NerdctlCommand.probe(SPEC.with(SPEC.limits(), true, "nerdctl")))
                .as("never a tty for the probe").containsExactlyElementsOf(expected);
    }

    @Test
    void networkCommandsAreExact() {
        assertThat(NerdctlCommand.networkCreate("nerdctl", NETWORK)).containsExactly(
                "nerdctl", "network", "create", "--driver", "bridge", "--internal", "--subnet", "10.213.7.0/24",
                "--gateway", "10.213.7.1", "--ipv6=false",
                "--opt", "com.docker.network.bridge.enable_ip_masquerade=false",
                "--label", "dev.sallyport.sandbox=ab12cd34", "sallyport-ab12cd34");
        assertThat(NerdctlCommand.networkInspect("nerdctl", NETWORK))
                .containsExactly("nerdctl", "network", "inspect", "--mode=native", "sallyport-ab12cd34");
        assertThat(NerdctlCommand.networkRemove("nerdctl", NETWORK))
                .containsExactly("nerdctl", "network", "rm", "sallyport-ab12cd34");
        assertThat(NerdctlCommand.forceRemove("nerdctl", NETWORK))
                .containsExactly("nerdctl", "rm", "-f", "sallyport-ab12cd34", "sallyport-ab12cd34-probe");
    }

    @Test
    void argumentsThatWouldInjectFlagsOrMountOptionsAreRefused() {
        assertThatThrownBy(() -> NerdctlSpec.of(NETWORK, VmRuntime.KATA, "--privileged", List.of("sh"),
                SPEC.workspace(), SPEC.user(), SPEC.trustBundle()))
                .hasMessage("image: '--privileged' (expected: an image reference like debian:12)");
        assertThatThrownBy(() -> NerdctlSpec.of(NETWORK, VmRuntime.KATA, "debian:12", List.of("sh"),
                Path.of("/home/ann/x,dst=/etc"), SPEC.user(), SPEC.trustBundle()))
                .hasMessage("workspace: '/home/ann/x,dst=/etc' (expected: an absolute path without ',', '=', ':' or "
                        + "newlines, which nerdctl's mount options cannot carry; move or link the folder to such a path)");
        assertThatThrownBy(() -> NerdctlSpec.of(NETWORK, VmRuntime.KATA, "debian:12", List.of("sh"),
                Path.of("/home/ann/build:2026"), SPEC.user(), SPEC.trustBundle()))
                .hasMessageStartingWith("workspace: '/home/ann/build:2026' (expected: an absolute path without ',', "
                        + "'=', ':' or newlines");
        assertThatThrownBy(() -> NerdctlSpec.of(NETWORK, VmRuntime.KATA, "debian:12", List.of(),
                SPEC.workspace(), SPEC.user(), SPEC.trustBundle()))
                .hasMessage("command: empty (expected: the program to run after --)");
        assertThatThrownBy(() -> NerdctlCommand.build(SPEC.withSecrets(Map.of("HTTPS_PROXY", "x"))))
                .hasMessage("secrets: 'HTTPS_PROXY' would replace a variable the sandbox needs (expected: another name)");
        assertThatThrownBy(() -> SPEC.withSecrets(Map.of("BAD-NAME", "x")))
                .hasMessageStartingWith("secrets: 'BAD-NAME' is not a valid environment variable name");
    }

    @Test
    void toStringNamesSecretsButNotTheirPlaceholders() {
        assertThat(SPEC.withSecrets(Map.of("TOKEN", "placeholder-value")).toString())
                .contains("TOKEN").doesNotContain("placeholder-value");
    }
}
