package dev.sallyport.sandbox.net;

import dev.sallyport.testing.Prerequisites;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A small network laboratory for tests: namespaces, veth pairs, bridges, listeners on the host and inside
 * namespaces. Everything it creates is undone in {@link #close()}, newest first. All addresses live only on
 * interfaces it created.
 */
final class NetLab implements AutoCloseable {

    static final HostShell SHELL = new HostShell(Duration.ofSeconds(30));

    private final Deque<HostCommand> undo = new ArrayDeque<>();
    private final List<Process> processes = new ArrayList<>();
    private final List<AutoCloseable> sockets = new ArrayList<>();
    private final String tag = HexFormat.of().formatHex(new byte[] {(byte) ThreadLocalRandom.current().nextInt(),
            (byte) ThreadLocalRandom.current().nextInt(), (byte) ThreadLocalRandom.current().nextInt()});

    /** Skips the test (fails it under CI) unless we are root with ip, nft, python3 and working netns. */
    static void requireRootWithNetworkTools() throws IOException {
        Prerequisites.requireRoot("network namespaces, bridges, nftables; run as root, as CI does");
        Prerequisites.require("ip", Executables.find("ip").isPresent(), "iproute2: apt-get install iproute2");
        Prerequisites.require("nft", Executables.find("nft").isPresent(), "nftables: apt-get install nftables");
        Prerequisites.require("python3", Executables.find("python3").isPresent(), "the in-namespace clients");
        String probe = "sallyport-probe-" + ThreadLocalRandom.current().nextInt(1 << 20);
        CommandResult added = SHELL.capture(HostCommand.tolerant("ip", "netns", "add", probe));
        SHELL.capture(HostCommand.tolerant("ip", "netns", "del", probe));
        Prerequisites.require("network namespaces", added.exit() == 0, added.firstErrorLine());
        CommandResult nft = SHELL.capture(HostCommand.tolerant("nft", "list", "tables"));
        Prerequisites.require("nftables", nft.exit() == 0, nft.firstErrorLine());
    }

    /** A short random tag for names (interfaces are limited to 15 characters). */
    String tag() {
        return tag;
    }

    void run(String... argv) throws IOException {
        SHELL.capture(HostCommand.of(argv));
    }

    void run(HostCommand command) throws IOException {
        SHELL.capture(command);
    }

    /** Registers a command that {@link #close()} runs (newest first); failures there are ignored. */
    void onClose(String... argv) {
        undo.push(HostCommand.tolerant(argv));
    }

    /** Creates a namespace with loopback up. */
    String namespace(String suffix) throws IOException {
        String name = "sp-" + tag + "-" + suffix;
        onClose("ip", "netns", "del", name);
        run("ip", "netns", "add", name);
        run("ip", "-n", name, "link", "set", "lo", "up");
        return name;
    }

    /**
     * A veth pair: host end {@code hostEnd} (attached to {@code bridge} if not null), namespace end renamed eth0
     * with {@code nsCidr} and a default route via {@code gateway}. This is what CNI's bridge plugin does.
     */
    void attach(String ns, String hostEnd, /* nullable */ String bridge, String nsCidr, String gateway)
            throws IOException {
        String peer = hostEnd + "p";
        onClose("ip", "link", "del", "dev", hostEnd);
        run("ip", "link", "add", hostEnd, "type", "veth", "peer", "name", peer);
        run("ip", "link", "set", peer, "netns", ns);
        run("ip", "-n", ns, "link", "set", peer, "name", "eth0");
        run("ip", "-n", ns, "addr", "add", nsCidr, "dev", "eth0");
        run("ip", "-n", ns, "link", "set", "eth0", "up");
        run("ip", "-n", ns, "route", "add", "default", "via", gateway);
        if (bridge != null) {
            run("ip", "link", "set", hostEnd, "master", bridge);
        }
        run("ip", "link", "set", hostEnd, "up");
    }

    /** Starts {@code listeners.py} in {@code ns} and waits until it is listening. */
    void listenersIn(String ns, String... specs) throws Exception {
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", ns, python(), "-c", script("listeners.py")));
        argv.addAll(List.of(specs));
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        processes.add(process);
        String first = CompletableFuture.supplyAsync(() -> firstLine(process.getInputStream()))
                .get(15, TimeUnit.SECONDS);
        if (!"ready".equals(first)) {
            throw new IOException("listeners in " + ns + " did not start: " + first);
        }
    }

    /** Runs {@code probe_client.py} in {@code ns}; returns name to "result" (elapsed time dropped) and times. */
    Probed probeFrom(String ns, Map<String, String> targets) throws IOException {
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", ns, python(), "-c", script("probe_client.py")));
        targets.forEach((name, target) -> argv.add(name + "|" + target));
        CommandResult result = new HostShell(Duration.ofSeconds(10L + 3L * targets.size())).capture(new HostCommand(argv, null, false));
        Map<String, String> results = new LinkedHashMap<>();
        Map<String, Integer> millis = new LinkedHashMap<>();
        for (String line : result.stdout().lines().toList()) {
            String[] parts = line.split(" ");
            results.put(parts[0], parts[1]);
            millis.put(parts[0], Integer.parseInt(parts[2]));
        }
        return new Probed(results, millis);
    }

    record Probed(Map<String, String> results, Map<String, Integer> millis) {
    }

    /** A TCP listener in this JVM (the host namespace) that greets each client with {@code banner}. */
    InetSocketAddress tcpBanner(InetAddress address, int port, String banner) throws IOException {
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(address, port));
        sockets.add(server);
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try (Socket client = server.accept(); OutputStream out = client.getOutputStream()) {
                    out.write((banner + "\n").getBytes(StandardCharsets.US_ASCII));
                } catch (IOException closed) {
                    return;
                }
            }
        });
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    /** A UDP listener in this JVM that answers every datagram with {@code reply}. */
    void udpEcho(InetAddress address, int port, String reply) throws IOException {
        DatagramSocket socket = new DatagramSocket(new InetSocketAddress(address, port));
        sockets.add(socket);
        Thread.ofVirtual().start(() -> {
            byte[] buffer = new byte[512];
            while (!socket.isClosed()) {
                try {
                    DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
                    socket.receive(packet);
                    byte[] answer = reply.getBytes(StandardCharsets.US_ASCII);
                    socket.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
                } catch (IOException closed) {
                    return;
                }
            }
        });
    }

    @Override
    public void close() {
        for (AutoCloseable socket : sockets) {
            try {
                socket.close();
            } catch (Exception ignored) {
                // closing a test socket
            }
        }
        for (Process process : processes) {
            try {
                process.getOutputStream().close();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (IOException | InterruptedException e) {
                process.destroyForcibly();
            }
        }
        while (!undo.isEmpty()) {
            try {
                SHELL.capture(undo.pop());
            } catch (IOException ignored) {
                // tolerant commands; keep undoing the rest
            }
        }
    }

    static String python() throws IOException {
        CommandResult result = SHELL.capture(HostCommand.of("python3", "-c", "import sys; print(sys.executable)"));
        return result.stdout().strip();
    }

    static String script(String name) throws IOException {
        try (InputStream in = NetLab.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("test resource missing: " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static String firstLine(InputStream in) {
        try {
            String line = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).readLine();
            return line == null ? "(exited)" : line;
        } catch (IOException e) {
            return "(error " + e.getMessage() + ")";
        }
    }
}
