package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox's DNS over UDP, run on the host: reads the queries the sandbox's nftables redirect from port 53 of its
 * loopback to its UDP socket ({@code 127.0.0.1:PORT} of the sandbox's network namespace, created inside and handed
 * over by {@link HostLink}), sends each, unread, to the proxy's DNS stub over UDP from one socket of the host's, and
 * sends the stub's answer back to the asker. The stub decides, audits and limits exactly as for DNS over TCP. The
 * relay only swaps the query's id for one of its own while the query is pending (so two askers' equal ids cannot
 * take each other's answer); at most {@link #MAX_PENDING} are, each for {@link #PENDING_NANOS}: past that a query
 * is dropped, as a lost datagram would be (resolvers ask again). Nothing else crosses: the socket only ever gets
 * datagrams sent to it, and answers go only to a pending asker.
 */
final class DnsDatagramRelay implements AutoCloseable {
    static final int MAX_PENDING = 256;
    static final long PENDING_NANOS = 5_000_000_000L;
    private static final int HEADER = 12;
    private static final int MAX_QUERY = 4096;
    private static final int MAX_ANSWER = 65535;
    private static final int SOCKADDR_IN = 16;
    private static final Logger LOGGER = LoggerFactory.getLogger(DnsDatagramRelay.class);

    /** A query sent on to the stub: who asked, with which id, and when. */
    private record Pending(byte[] asker, short id, long at) {}

    private final int inside;
    private final DatagramChannel stub;
    /** Pending queries by the relay's id, oldest first; guarded by itself. */
    private final Map<Short, Pending> pending = new LinkedHashMap<>();
    private short next;
    private Thread answers;
    private volatile boolean closed;

    private DnsDatagramRelay(int inside, DatagramChannel stub) {
        this.inside = inside;
        this.stub = stub;
    }

    /** Takes ownership of {@code inside} (the sandbox's UDP socket) and relays to {@code dns} until {@link #close()}. */
    static DnsDatagramRelay start(int inside, InetSocketAddress dns) throws IOException {
        DatagramChannel stub;
        try {
            stub = DatagramChannel.open().connect(dns);
        } catch (IOException e) {
            Sockets.close(inside);
            throw e;
        }
        DnsDatagramRelay relay = new DnsDatagramRelay(inside, stub);
        relay.answers = Thread.ofPlatform().daemon().name("sallyport-dns-answers").stackSize(Pump.STACK)
                .start(relay::answers);
        Thread.ofPlatform().daemon().name("sallyport-dns-queries").stackSize(Pump.STACK).start(relay::queries);
        return relay;
    }

    private void queries() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(MAX_QUERY);
            MemorySegment from = arena.allocate(SOCKADDR_IN, 4);
            while (!closed) {
                int n = Sockets.receiveFrom(inside, buffer, MAX_QUERY, from);
                if (n >= HEADER && !closed) {
                    forward(buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), from.toArray(ValueLayout.JAVA_BYTE));
                }
            }
        } catch (IOException e) {
            if (!closed) {
                LOGGER.warn("sandbox: DNS over UDP stopped: {}", e.getMessage());
            }
        } finally {
            // The answers' thread sends on the inside socket too: it ends first, then the number may be reused.
            try {
                stub.close();
                answers.join(5_000);
            } catch (IOException e) {
                LOGGER.debug("sandbox: closing the DNS relay's socket", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Sockets.close(inside);
        }
    }

    private void forward(byte[] query, byte[] asker) {
        short id = (short) ((query[0] & 0xff) << 8 | (query[1] & 0xff));
        short mine;
        synchronized (pending) {
            expire(System.nanoTime());
            if (pending.size() >= MAX_PENDING) {
                return;
            }
            do {
                mine = next++;
            } while (pending.containsKey(mine));
            pending.put(mine, new Pending(asker, id, System.nanoTime()));
        }
        query[0] = (byte) (mine >> 8);
        query[1] = (byte) mine;
        try {
            stub.write(ByteBuffer.wrap(query));
        } catch (IOException e) {
            synchronized (pending) {
                pending.remove(mine);
            }
            LOGGER.debug("sandbox: a DNS query could not be sent to the stub", e);
        }
    }

    private void expire(long now) {
        Iterator<Pending> oldest = pending.values().iterator();
        while (oldest.hasNext() && now - oldest.next().at() > PENDING_NANOS) {
            oldest.remove();
        }
    }

    private void answers() {
        ByteBuffer answer = ByteBuffer.allocate(MAX_ANSWER);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(MAX_ANSWER);
            MemorySegment to = arena.allocate(SOCKADDR_IN, 4);
            while (!closed) {
                answer.clear();
                int n = stub.read(answer);
                if (n < HEADER) {
                    continue;
                }
                byte[] bytes = answer.array();
                short mine = (short) ((bytes[0] & 0xff) << 8 | (bytes[1] & 0xff));
                Pending asked;
                synchronized (pending) {
                    asked = pending.remove(mine);
                }
                if (asked == null) {
                    continue;                   // late, or never asked: nobody waits for it
                }
                bytes[0] = (byte) (asked.id() >> 8);
                bytes[1] = (byte) asked.id();
                MemorySegment.copy(bytes, 0, out, ValueLayout.JAVA_BYTE, 0, n);
                MemorySegment.copy(asked.asker(), 0, to, ValueLayout.JAVA_BYTE, 0, SOCKADDR_IN);
                try {
                    Sockets.sendTo(inside, out, n, to);
                } catch (IOException e) {
                    LOGGER.debug("sandbox: a DNS answer could not be sent back", e);
                }
            }
        } catch (IOException e) {
            if (!closed) {
                LOGGER.warn("sandbox: DNS over UDP answers stopped: {}", e.getMessage());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        Sockets.shutdown(inside, Sockets.SHUT_RDWR);
    }
}
