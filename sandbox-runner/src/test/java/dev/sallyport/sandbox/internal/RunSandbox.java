package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.ProcessSandbox;
import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.SandboxSpec;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * One process sandbox run in a JVM of its own, for tests that put it inside something else ({@link OtherSandbox}):
 * {@code java RunSandbox WORKSPACE HOME CA_PEM PROXY_PORT REQUIRE_LANDLOCK COMMAND...} runs {@code COMMAND} with
 * the caller's stdio, the proxy on the loopback at {@code PROXY_PORT}, and exits with its status (2 when the
 * sandbox cannot be set up, with the one-line reason on stderr).
 */
final class RunSandbox {
    private RunSandbox() {
    }

    public static void main(String[] args) throws Exception {
        List<String> command = Arrays.asList(args).subList(5, args.length);
        SandboxSpec spec = SandboxSpec.builder(command, Path.of(args[0]),
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[3])),
                        Files.readAllBytes(Path.of(args[2])))
                .hostHome(Path.of(args[1])).hostEnv(Map.of("TERM", "dumb"))
                .requireLandlock(Boolean.parseBoolean(args[4])).build();
        try {
            System.exit(ProcessSandbox.run(spec));
        } catch (SandboxException e) {
            System.err.println("sallyport: " + e.getMessage());
            System.exit(2);
        }
    }
}
