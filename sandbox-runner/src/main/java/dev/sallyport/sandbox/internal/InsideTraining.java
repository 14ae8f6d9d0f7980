package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Makes the JDK's ahead-of-time cache (JEP 483 and 514) of the {@link Inside} JVM: {@code bin/sallyport} runs
 * {@code java -cp sallyport-sandbox-runner-*-inside.jar dev.sallyport.sandbox.internal.InsideTraining CACHE} once
 * per built jar, and every sandbox's setup JVM then loads and links its classes (Landlock, seccomp, the sockets,
 * the foreign function calls) from {@code CACHE} instead of the jar. The training is the real setup outside any
 * sandbox: this process plays the host (the unix socket, the go-ahead) for an {@code Inside} JVM started with
 * {@link Inside#JVM_OPTIONS} and {@code -XX:AOTCacheOutput}, whose command does not exist, so it confines only its
 * exec thread, fails to start it and exits, writing the cache. It uses a temporary folder that it removes and a
 * port on loopback. Exit status 0 when the cache was written.
 */
public final class InsideTraining {
    /** A command no system has: the setup's exec fails and the training JVM exits as a setup does then. */
    static final String NO_COMMAND = "/nonexistent/sallyport-aot-training";
    private static final long TIMEOUT_SECONDS = 120;

    private InsideTraining() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: InsideTraining CACHE (expected: the cache file to write)");
            System.exit(2);
        }
        Path cache = Path.of(args[0]).toAbsolutePath();
        Path dir = Files.createTempDirectory("sallyport-inside-aot");
        int status = 1;
        try {
            status = train(cache, dir);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        System.exit(status);
    }

    private static int train(Path cache, Path dir) throws IOException, InterruptedException {
        Path socket = dir.resolve("host.sock");
        // supervised where the kernel can (Inside decides, as in a sandbox); HostLink's own
        // check would load SLF4J, which the inside jar does not hold
        Launch launch = new Launch(List.of(NO_COMMAND), Map.of("PATH", "/usr/bin:/bin"), dir.toString(), freePort(),
                socket.toString(), false, List.of("/"), List.of(dir.toString()), List.of("/dev"), 0, 0,
                true, Integer.MAX_VALUE, List.of(), List.of(), false);
        Path launchFile = Files.write(dir.resolve("launch"), launch.encode());
        try (ServerSocketChannel host = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            host.bind(UnixDomainSocketAddress.of(socket));
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(Inside.JVM_OPTIONS);
            command.add("-XX:AOTCacheOutput=" + cache);
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), Inside.class.getName(),
                    launchFile.toString()));
            // the setup in a sandbox has no new privileges (bwrap): the training's must not either (seccomp needs it)
            Landlock.forCurrentArch().setNoNewPrivileges();
            Process setup = new ProcessBuilder(command).inheritIO().start();
            Thread.ofPlatform().daemon().name("sallyport-inside-training-host").start(() -> answer(host));
            if (!setup.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                setup.destroyForcibly();
                System.err.println("sallyport inside training: the setup JVM took over " + TIMEOUT_SECONDS + " s");
                return 1;
            }
            // the setup could not start the command, as planned: the status a setup ends with then
            return setup.exitValue() == Inside.NOT_FOUND && Files.isRegularFile(cache) ? 0 : 1;
        }
    }

    /** The host's part: takes the setup's sockets (their descriptors are dropped) and gives the go-ahead. */
    private static void answer(ServerSocketChannel host) {
        try (SocketChannel link = host.accept()) {
            link.read(ByteBuffer.allocate(256));
            link.write(ByteBuffer.wrap(new byte[] {HostLink.GO_AHEAD}));
        } catch (IOException e) {
            System.err.println("sallyport inside training: host side: " + e.getMessage());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
