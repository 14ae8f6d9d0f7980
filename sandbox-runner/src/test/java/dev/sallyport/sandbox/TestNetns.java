package dev.sallyport.sandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace this test creates (root only): a veth pair with 10.213.x.1 on the host side and
 * 10.213.x.2 inside, and a one-shot TCP server inside that prints "CONNECTED" when reached. The host can reach
 * it (checked), so a failure from the sandbox is the sandbox's doing.
 */
final class TestNetns implements AutoCloseable {
    final String name;
    final String hostIfc;
    final String address;
    final int port = 8080;
    private final Process server;
    final BufferedReader serverOut;

    TestNetns() throws Exception {
        int n = (int) (ProcessHandle.current().pid() % 200) + 20;
        name = "sp-sbx-test-" + n;
        hostIfc = "sp-sbx-h" + n;
        address = "10.213." + n + ".2";
        close();
        sh("ip", "netns", "add", name);
        sh("ip", "link", "add", hostIfc, "type", "veth", "peer", "name", "sp-sbx-t", "netns", name);
        sh("ip", "addr", "add", "10.213." + n + ".1/30", "dev", hostIfc);
        sh("ip", "link", "set", hostIfc, "up");
        sh("ip", "netns", "exec", name, "ip", "addr", "add", address + "/30", "dev", "sp-sbx-t");
        sh("ip", "netns", "exec", name, "ip", "link", "set", "sp-sbx-t", "up");
        sh("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up");
        server = new ProcessBuilder("ip", "netns", "exec", name, "python3", "-c", """
                import socket
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("0.0.0.0", %d)); s.listen(8); print("ready", flush=True)
                s.settimeout(60)
                while True:
                    try:
                        c, a = s.accept(); print("CONNECTED", a[0], flush=True); c.close()
                    except socket.timeout:
                        break
                """.formatted(port)).redirectErrorStream(true).start();
        serverOut = server.inputReader();
        if (!"ready".equals(serverOut.readLine())) {
            throw new IllegalStateException("test netns server: did not start (expected: ready)");
        }
    }

    static boolean hasIp() {
        return new java.io.File("/usr/sbin/ip").canExecute() || new java.io.File("/sbin/ip").canExecute();
    }

    private static void sh(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(cmd)).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", cmd) + ": failed: " + new String(out, StandardCharsets.UTF_8).trim());
        }
    }

    @Override
    public void close() throws IOException {
        try {
            if (server != null) {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            for (String[] cmd : new String[][] {{"ip", "link", "del", hostIfc}, {"ip", "netns", "del", name}}) {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                p.waitFor(20, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while removing " + name, e);
        }
    }
}
