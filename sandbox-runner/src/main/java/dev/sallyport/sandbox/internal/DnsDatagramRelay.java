package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox's DNS over UDP, run on the host: reads the queries the sandbox's nftables redirect from port 53 of its
 * loopback to its UDP socket ({@code 127.0.0.1:PORT} of the sandbox's network namespace, created inside and handed
 * over by {@link HostLink}), sends each, unread, to the proxy's DNS stub over one TCP connection (DNS over TCP: each
 * message with its two-byte length first), and sends the stub's answer back to the asker. To a run's own proxy that
 * is its stub's TCP listener; to a shared proxy, its main listener, the connection beginning with the sandbox's DNS
 * header ({@code header}: its token), so that each question is decided as that sandbox's. The stub decides, audits
 * and limits exactly as for DNS the sandbox sends over TCP itself. The connection is opened at the first query and
 * again after the proxy closed it (idle). The relay only swaps the query's id for one of its own while the query is
 * pending (so two askers' equal ids cannot take each other's answer); at most {@link #MAX_PENDING} are, each for
 * {@link #PENDING_NANOS}: past that a query is dropped, as a lost datagram would be (resolvers ask again). Nothing
 * else crosses: the socket only ever gets datagrams sent to it, and answers go only to a pending asker.
 *
 * <p>The VM bridge's gateway relay ({@code vm.GatewayRelay}) runs one on its own UDP socket on the gateway
 * ({@link #listen}), taking questions from the guest's address only: a question from any other source is answered
 * {@code REFUSED} there, unread by the proxy, and its source reported.
 */
public final class DnsDatagramRelay implements AutoCloseable {
    static final int MAX_PENDING = 256;
    static final long PENDING_NANOS = 5_000_000_000L;
    private static final int HEADER = 12;
    private static final int MAX_QUERY = 4096;
    private static final int MAX_ANSWER = 65535;
    private static final int SOCKADDR_IN = 16;

    /** A query sent on to the stub: who asked, with which id, and when. */
    private record Pending(byte[] asker, short id, long at) {}

    /**
     * Who may ask: {@code only} (null: whoever can send to the socket); a question from another source is answered
     * {@code REFUSED} and its address given to {@code strangers}.
     */
    private record Askers(/* @Nullable */ InetAddress only, Consumer<InetAddress> strangers) {
        static final Askers ANYONE = new Askers(null, stranger -> { });
    }

    private final int inside;
    private final InetSocketAddress dns;
    private final byte[] header;
    private final Askers askers;
    /** Pending queries by the relay's id, oldest first; guarded by itself. */
    private final Map<Short, Pending> pending = new LinkedHashMap<>();
    /** The connection to the stub, null until the first query and after it closed; guarded by {@code this}. */
    private SocketChannel stream;
    /** Each connection's reader of answers (all end before the inside socket is closed). */
    private final List<Thread> readers = new CopyOnWriteArrayList<>();
    private short next;
    private volatile boolean closed;

    private DnsDatagramRelay(int inside, InetSocketAddress dns, byte[] header, Askers askers) {
        this.inside = inside;
        this.dns = dns;
        this.header = header;
        this.askers = askers;
    }

    /**
     * Takes ownership of {@code inside} (the sandbox's UDP socket) and relays to the stub at {@code dns} over TCP,
     * each connection beginning with {@code header} (null: nothing), until {@link #close()}.
     */
    static DnsDatagramRelay start(int inside, InetSocketAddress dns, /* @Nullable */ byte[] header) {
        return start(inside, dns, header, Askers.ANYONE);
    }

    /**
     * Binds a UDP socket to the IPv4 address {@code at} and relays the questions {@code only} sends there to the stub
     * at {@code dns} as {@link #start} does; a question from any other source is answered {@code REFUSED} and its
     * source given to {@code strangers}.
     */
    public static DnsDatagramRelay listen(InetSocketAddress at, InetSocketAddress dns, byte[] header, InetAddress only,
                                          Consumer<InetAddress> strangers) throws IOException {
        return start(Sockets.udpSocket(at), dns, header, new Askers(Objects.requireNonNull(only, "only"),
                Objects.requireNonNull(strangers, "strangers")));
    }

    private static DnsDatagramRelay start(int inside, InetSocketAddress dns, /* @Nullable */ byte[] header,
                                          Askers askers) {
        DnsDatagramRelay relay = new DnsDatagramRelay(inside, dns, header == null ? new byte[0] : header.clone(),
                askers);
        Thread.ofPlatform().daemon().name("sallyport-dns-queries").stackSize(Pump.STACK).start(relay::queries);
        return relay;
    }

    private void queries() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(MAX_QUERY);
            MemorySegment from = arena.allocate(SOCKADDR_IN, 4);
            while (!closed) {
                int n = Sockets.receiveFrom(inside, buffer, MAX_QUERY, from);
                if (n < HEADER || closed) {
                    continue;
                }
                if (askers.only() != null && !askers.only().equals(address(from))) {
                    refuse(buffer, n, from);
                } else {
                    forward(buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), from.toArray(ValueLayout.JAVA_BYTE));
                }
            }
        } catch (IOException e) {
            if (!closed) {
                log().warn("sandbox: DNS over UDP stopped: {}", e.getMessage());
            }
        } finally {
            // The readers send on the inside socket too: they end first, then the number may be reused.
            synchronized (this) {
                closeStream();
            }
            try {
                for (Thread reader : readers) {
                    reader.join(5_000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Sockets.close(inside);
        }
    }

    private static /* @Nullable */ InetAddress address(MemorySegment sockaddr) {
        InetSocketAddress a = Sockets.inetAddress(sockaddr);
        return a == null ? null : a.getAddress();
    }

    /**
     * A question from a source that may not ask: its own header back with QR set and RCODE 5 (REFUSED), nothing sent
     * to the stub, and the source reported; an answer (QR already set) gets nothing, so two relays cannot ping-pong.
     */
    private void refuse(MemorySegment packet, int n, MemorySegment from) {
        InetAddress stranger = address(from);
        if (stranger != null) {
            askers.strangers().accept(stranger);
        }
        byte flags = packet.get(ValueLayout.JAVA_BYTE, 2);
        if ((flags & 0x80) != 0) {
            return;
        }
        packet.set(ValueLayout.JAVA_BYTE, 2, (byte) (0x80 | (flags & 0x79)));   // QR, same opcode and RD; no AA, TC
        packet.set(ValueLayout.JAVA_BYTE, 3, (byte) 0x05);                      // no RA, RCODE REFUSED
        try {
            Sockets.sendTo(inside, packet, n, from);
        } catch (IOException e) {
            log().debug("sandbox: a DNS refusal could not be sent", e);
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
        ByteBuffer framed = ByteBuffer.allocate(2 + query.length).putShort((short) query.length).put(query).flip();
        try {
            send(framed);
        } catch (IOException e) {
            synchronized (pending) {
                pending.remove(mine);
            }
            log().debug("sandbox: a DNS query could not be sent to the stub", e);
        }
    }

    /** Writes one framed query on the connection, opening it (with the header first) when there is none. */
    private synchronized void send(ByteBuffer framed) throws IOException {
        if (stream == null) {
            SocketChannel opened = SocketChannel.open(dns);
            try {
                ByteBuffer h = ByteBuffer.wrap(header);
                while (h.hasRemaining()) {
                    opened.write(h);
                }
            } catch (IOException e) {
                opened.close();
                throw e;
            }
            stream = opened;
            readers.removeIf(t -> !t.isAlive());
            readers.add(Thread.ofPlatform().daemon().name("sallyport-dns-answers").stackSize(Pump.STACK)
                    .start(() -> answers(opened)));
        }
        try {
            while (framed.hasRemaining()) {
                stream.write(framed);
            }
        } catch (IOException e) {
            closeStream();
            throw e;
        }
    }

    private void closeStream() {
        if (stream != null) {
            try {
                stream.close();
            } catch (IOException e) {
                log().debug("sandbox: closing the DNS relay's connection", e);
            }
            stream = null;
        }
    }

    private void expire(long now) {
        Iterator<Pending> oldest = pending.values().iterator();
        while (oldest.hasNext() && now - oldest.next().at() > PENDING_NANOS) {
            oldest.remove();
        }
    }

    /** Reads the answers of one connection until it closes, each back to its asker. */
    @SuppressWarnings("ReferenceEquality")      // this very connection, not one equal to it
    private void answers(SocketChannel from) {
        ByteBuffer length = ByteBuffer.allocate(2);
        ByteBuffer answer = ByteBuffer.allocate(MAX_ANSWER);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(MAX_ANSWER);
            MemorySegment to = arena.allocate(SOCKADDR_IN, 4);
            while (!closed) {
                length.clear();
                answer.clear();
                if (!readFully(from, length)) {
                    return;
                }
                int n = length.getShort(0) & 0xffff;
                answer.limit(n);
                if (!readFully(from, answer) || n < HEADER) {
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
                    log().debug("sandbox: a DNS answer could not be sent back", e);
                }
            }
        } catch (IOException e) {
            log().debug("sandbox: the DNS relay's connection ended", e);
        } finally {
            synchronized (this) {
                if (stream == from) {
                    closeStream();          // the proxy closed it (idle): the next query opens another
                }
            }
        }
    }

    /** Fills {@code buffer} to its limit; false at the end of the stream. */
    private static boolean readFully(SocketChannel from, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (from.read(buffer) < 0) {
                return false;
            }
        }
        return true;
    }

    /** The UDP port the relay's socket is bound to. */
    public int port() throws IOException {
        return Sockets.localPort(inside);
    }

    /** Stops relaying; the socket is closed once its threads are done with it. */
    @Override
    public void close() {
        closed = true;
        Sockets.shutdown(inside, Sockets.SHUT_RDWR);
    }

    /** Made where it logs, not with the class: SLF4J initialises on the first logger, and most runs log nothing. */
    private static Logger log() {
        return LoggerFactory.getLogger(DnsDatagramRelay.class);
    }
}
