package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS through the proxy with the CA the sandbox was given: an {@code openssl s_server} on loopback presents a
 * leaf for {@code registry.example.com} signed by the test CA; a CONNECT stand-in tunnels to it. curl (trust
 * bundle from the environment) and Java (PKCS12 trust store and proxy from {@code JAVA_TOOL_OPTIONS}) must both
 * verify it; with the CA missing from the bundle the same fetch fails.
 */
@Timeout(180)
class SandboxTlsTest {
    @TempDir
    Path tmp;
    Fixture f;
    Process tlsServer;
    ConnectProxy connect;

    @BeforeEach
    void setUp() throws Exception {
        f = new Fixture(tmp);
        Files.writeString(tmp.resolve("san.ext"), "subjectAltName=DNS:registry.example.com\n");
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                tmp.resolve("leaf-key.pem").toString(), "-subj", "/CN=registry.example.com", "-out",
                tmp.resolve("leaf.csr").toString());
        openssl("x509", "-req", "-in", tmp.resolve("leaf.csr").toString(), "-CA", tmp.resolve("ca.pem").toString(),
                "-CAkey", tmp.resolve("ca-key.pem").toString(), "-CAcreateserial", "-days", "1", "-extfile",
                tmp.resolve("san.ext").toString(), "-out", tmp.resolve("leaf.pem").toString());
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        tlsServer = new ProcessBuilder("openssl", "s_server", "-accept", "127.0.0.1:" + port, "-cert",
                tmp.resolve("leaf.pem").toString(), "-key", tmp.resolve("leaf-key.pem").toString(), "-www", "-quiet")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        awaitListening(port);
        connect = new ConnectProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (connect != null) {
            connect.close();
        }
        if (tlsServer != null) {
            tlsServer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        f.close();
    }

    @Test
    void curlAndJavaTrustTheProxyCaInside() throws Exception {
        Files.writeString(f.workspace.resolve("Fetch.java"), """
                public class Fetch {
                    public static void main(String[] a) throws Exception {
                        var c = (java.net.HttpURLConnection) java.net.URI.create(a[0]).toURL().openConnection();
                        System.out.println("java status " + c.getResponseCode());
                    }
                }
                """);
        SandboxSpec spec = SandboxSpec.builder(List.of("/bin/sh", "-c",
                        "curl -sS -m 20 -o /dev/null -w 'curl status %{http_code}\\n' https://registry.example.com/;"
                                + " java -Xshare:auto -XX:TieredStopAtLevel=1 Fetch.java https://registry.example.com/"),
                        f.workspace, connect.address(), f.caPem).hostHome(f.home).build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).as(r.err()).contains("curl status 200", "java status 200");
        assertThat(connect.connects).containsOnly("registry.example.com:443");
    }

    @Test
    void toolsThatReadOnlyTheDistributionsBundleTrustTheProxyCa() throws Exception {
        // No variable names a bundle here: wget (GnuTLS), curl and Python find it at the distribution's path.
        String unset = String.join(" ", dev.sallyport.sandbox.internal.SandboxEnvironment.CA_BUNDLE.stream()
                .map(name -> "-u " + name).toList());
        SandboxSpec spec = SandboxSpec.builder(List.of("/bin/sh", "-c", "env " + unset + " wget -q -O page.html"
                        + " https://registry.example.com/; echo wget=$?; env " + unset + " curl -sS -m 20 -o /dev/null"
                        + " -w 'curl=%{http_code}\n' https://registry.example.com/; env " + unset + " python3 -c"
                        + " 'import urllib.request; print(\"python=%d\" % urllib.request.urlopen(\"https://registry.example.com/\").status)'"),
                f.workspace, connect.address(), f.caPem).hostHome(f.home).build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).as(r.err()).contains("wget=0", "curl=200", "python=200");
        assertThat(f.workspace.resolve("page.html")).content().contains("s_server");
        assertThat(connect.connects).containsOnly("registry.example.com:443");
    }

    @Test
    void theUsersJavaToolOptionsApplyAndTheSandboxsProxyAndTrustStillWin() throws Exception {
        Files.writeString(f.workspace.resolve("Flag.java"), """
                public class Flag {
                    public static void main(String[] a) throws Exception {
                        System.out.println("flag " + System.getProperty("user.flag"));
                        var c = (java.net.HttpURLConnection) java.net.URI.create(a[0]).toURL().openConnection();
                        System.out.println("java status " + c.getResponseCode());
                    }
                }
                """);
        SandboxSpec spec = SandboxSpec.builder(List.of("java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "Flag.java",
                        "https://registry.example.com/"), f.workspace, connect.address(), f.caPem).hostHome(f.home)
                .hostEnv(java.util.Map.of("JAVA_TOOL_OPTIONS", "-Duser.flag=from-the-user -Dhttps.proxyHost=192.0.2.1"
                        + " -Dhttps.proxyPort=9 -Djavax.net.ssl.trustStore=/nonexistent"))
                .passEnv("JAVA_TOOL_OPTIONS").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).as(r.err()).contains("flag from-the-user", "java status 200");
        assertThat(connect.connects).containsOnly("registry.example.com:443");
    }

    @Test
    void withoutOurCaTheSameFetchFails() throws Exception {
        byte[] otherCa = Files.readAllBytes(f.root.resolve("ca.pem"));
        Path otherDir = Files.createDirectories(tmp.resolve("other"));
        Fixture other = new Fixture(otherDir);
        other.close();
        assertThat(other.caPem).isNotEqualTo(otherCa);
        SandboxSpec spec = SandboxSpec.builder(List.of("/bin/sh", "-c",
                        "curl -sS -m 20 -o /dev/null https://registry.example.com/; echo exit=$?"),
                f.workspace, connect.address(), other.caPem).hostHome(f.home).build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).contains("exit=60");
        assertThat(r.err()).contains("certificate");
    }

    private static void openssl(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("openssl " + args[0] + ": failed: " + out);
        }
    }

    private static void awaitListening(int port) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                return;
            } catch (java.io.IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("openssl s_server: not listening on " + port + " after 30 s");
                }
                Thread.onSpinWait();
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }
}
