package dev.sallyport.sandbox.vm;

import dev.sallyport.proxy.identity.RelayHeader;
import dev.sallyport.sandbox.net.SandboxNetwork;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * What a VM sandbox attached to a shared proxy finds on its bridge's gateway instead of a proxy of its own: a relay
 * that takes each connection to the proxy port from the guest's address ({@link SandboxNetwork#guest()}, which the
 * host table makes the only source the bridge may send) and forwards it to the shared proxy's main listener, writing
 * the sandbox's identity first (the PROXY v2 {@code LOCAL} header with the registration's token,
 * {@link RelayHeader#explicit}, the one the process backend's relay writes). The token never enters the guest, and
 * whatever the guest sends comes after the header, where the proxy refuses another one as forged. A connection from
 * any other address (the table lets none in from the bridge; a process on the host reaching the gateway over
 * loopback would be one) is closed, and each such address is reported once to {@code strangers} for the audit log.
 *
 * <p>Transparent capture is not offered attached yet (the shared proxy takes no original destinations or DNS
 * questions with an identity): the relay holds the gateway's transparent and DNS ports so no other process on the
 * host can take them, closes every TCP connection there at once, and answers every DNS question over UDP
 * {@code REFUSED}, so a client that ignores the proxy variables fails at once instead of waiting. Capture goes here:
 * forward those connections with their original destination from connection tracking once the proxy has a protocol
 * for it.
 */
public final class GatewayRelay implements AutoCloseable {

    /** Distinct strangers reported at most (each once); more are still refused. */
    static final int MAX_REPORTED = 256;
    private static final int BUFFER = 64 * 1024;
    private static final int DNS_HEADER = 12;

    private final InetAddress guest;
    private final InetSocketAddress proxy;
    private final byte[] identity;
    private final Consumer<String> strangers;
    private final List<AutoCloseable> listeners = new ArrayList<>();
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private final Set<String> reported = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private GatewayRelay(InetAddress guest, InetSocketAddress proxy, String token, Consumer<String> strangers) {
        this.guest = guest;
        this.proxy = proxy;
        this.identity = RelayHeader.explicit(token);
        this.strangers = strangers;
    }

    /**
     * Binds the gateway's proxy port (and holds its transparent and DNS ports) on {@code network} and relays to
     * {@code proxy} with {@code token}; a connection from an address other than the guest's is closed and its address
     * given to {@code strangers} (once each).
     */
    public static GatewayRelay start(SandboxNetwork network, InetSocketAddress proxy, String token,
                                     Consumer<String> strangers) throws IOException {
        GatewayRelay relay = new GatewayRelay(InetAddress.ofLiteral(network.guest()), proxy, token, strangers);
        InetAddress gateway = InetAddress.ofLiteral(network.gateway());
        try {
            ServerSocketChannel explicit = relay.listen(new InetSocketAddress(gateway, network.proxyPort()));
            ServerSocketChannel transparent = relay.listen(new InetSocketAddress(gateway, network.transparentPort()));
            ServerSocketChannel dnsTcp = relay.listen(new InetSocketAddress(gateway, network.dnsPort()));
            DatagramChannel dnsUdp = DatagramChannel.open().bind(new InetSocketAddress(gateway, network.dnsPort()));
            relay.listeners.add(dnsUdp);
            Thread.ofVirtual().name("sallyport-gateway-relay").start(() -> relay.accept(explicit, true));
            Thread.ofVirtual().name("sallyport-gateway-transparent").start(() -> relay.accept(transparent, false));
            Thread.ofVirtual().name("sallyport-gateway-dns-tcp").start(() -> relay.accept(dnsTcp, false));
            Thread.ofVirtual().name("sallyport-gateway-dns").start(() -> relay.refuseQuestions(dnsUdp));
        } catch (IOException e) {
            relay.close();
            throw e;
        }
        return relay;
    }

    private ServerSocketChannel listen(InetSocketAddress at) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        listeners.add(server);
        return server.bind(at, 128);
    }

    private void accept(ServerSocketChannel server, boolean relays) {
        while (!closed) {
            SocketChannel peer;
            try {
                peer = server.accept();
            } catch (IOException e) {
                return;             // closed
            }
            InetAddress from = address(peer);
            if (!relays || !guest.equals(from)) {
                if (relays && from != null && reported.size() < MAX_REPORTED && reported.add(from.getHostAddress())) {
                    strangers.accept(from.getHostAddress());
                }
                closeQuietly(peer);
                continue;
            }
            open.add(peer);
            Thread.ofVirtual().name("sallyport-gateway-conn").start(() -> relay(peer));
        }
    }

    /** One guest connection: to the proxy, the identity header first, then both directions until both end. */
    private void relay(SocketChannel guestSide) {
        SocketChannel proxySide = null;
        try {
            proxySide = SocketChannel.open(proxy);
            open.add(proxySide);
            if (closed) {
                return;
            }
            writeFully(proxySide, ByteBuffer.wrap(identity));
            SocketChannel up = proxySide;
            Thread down = Thread.ofVirtual().name("sallyport-gateway-down").start(() -> copy(up, guestSide));
            copy(guestSide, proxySide);
            down.join();
        } catch (IOException e) {
            // the proxy is not there or a side failed: both are closed below, the guest sees the close
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            close(guestSide);
            if (proxySide != null) {
                close(proxySide);
            }
        }
    }

    /** Copies until {@code from} ends, then ends {@code to}'s output; on an error closes both. */
    private void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
        try {
            while (from.read(buffer.clear()) >= 0) {
                writeFully(to, buffer.flip());
            }
            to.shutdownOutput();
        } catch (IOException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    /** Every question gets its own header back with QR set and RCODE 5 (REFUSED): no name resolves here. */
    private void refuseQuestions(DatagramChannel socket) {
        ByteBuffer packet = ByteBuffer.allocate(BUFFER);
        while (!closed) {
            SocketAddress from;
            try {
                from = socket.receive(packet.clear());
                packet.flip();
                if (packet.remaining() < DNS_HEADER || (packet.get(2) & 0x80) != 0) {
                    continue;                                  // not a question
                }
                packet.put(2, (byte) (0x80 | (packet.get(2) & 0x79)));      // QR, same opcode and RD; no AA, no TC
                packet.put(3, (byte) 0x05);                                 // no RA, RCODE REFUSED
                socket.send(packet, from);
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                // one datagram failed; go on with the next
            }
        }
    }

    private static InetAddress address(SocketChannel peer) {
        try {
            return peer.getRemoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static void writeFully(SocketChannel to, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            to.write(bytes);
        }
    }

    private void close(SocketChannel channel) {
        open.remove(channel);
        closeQuietly(channel);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // already closed or broken: nothing else to release
        }
    }

    /** Stops listening and closes every connection in flight. */
    @Override
    public void close() {
        closed = true;
        listeners.forEach(GatewayRelay::closeQuietly);
        open.forEach(GatewayRelay::closeQuietly);
    }

    @Override
    public String toString() {
        return "GatewayRelay[guest " + guest.getHostAddress() + " -> " + proxy + ", token=hidden]";
    }
}
