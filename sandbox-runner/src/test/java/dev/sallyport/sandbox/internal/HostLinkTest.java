package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.Await;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host end of a sandbox, handed a listener the way {@link Inside} hands it over, in a JVM that runs other
 * sandboxes too (a CI runner's, or the tests'): what one link does after its hand-over never reaches a socket that
 * belongs to another.
 */
class HostLinkTest {

    @Test
    void closingALinkAfterItsHandOverLeavesSocketsOpenedSinceListening(@TempDir Path dir) throws Exception {
        try (ServerSocket proxy = new ServerSocket(0, 16, InetAddress.getLoopbackAddress())) {
            int inside = Sockets.tcpListener(0, 16);
            int port = Sockets.localPort(inside);
            Path path = dir.resolve("link.sock");
            HostLink link = HostLink.listen(path);
            List<Integer> others = new ArrayList<>();
            try {
                link.start(ProcessHandle.current(), new ProxyRelay.Targets(new InetSocketAddress(
                        InetAddress.getLoopbackAddress(), proxy.getLocalPort())), new HostLink.Rules(port, 0, 0),
                        () -> { });
                int conn = Sockets.unixConnect(path.toString());
                try (Arena arena = Arena.ofConfined()) {
                    FdPassing.send(conn, HostLink.LISTENER_ONLY.getBytes(StandardCharsets.US_ASCII), inside);
                    MemorySegment answer = arena.allocate(1);
                    assertThat(Sockets.read(conn, answer, 1)).isEqualTo(1);
                    assertThat(answer.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo(HostLink.GO_AHEAD);
                } finally {
                    Sockets.close(conn);
                    Sockets.close(inside);
                }
                // the link has stopped listening and closes its socket now: its number is the next one free, and
                // another sandbox's listener (here: one of these) gets it
                Await.until("the link's socket file removed", Duration.ofSeconds(10), () -> !Files.exists(path));
                for (int i = 0; i < 64; i++) {
                    others.add(Sockets.tcpListener(0, 16));
                }
            } finally {
                link.close();
            }
            try {
                for (int fd : others) {
                    assertThat(Sockets.intOption(fd, Sockets.SOL_SOCKET, Sockets.SO_ACCEPTCONN))
                            .as("descriptor %d still listening after the other link closed", fd).isEqualTo(1);
                }
            } finally {
                others.forEach(Sockets::close);
            }
        }
    }
}
