package dev.sallyport.proxy.identity;

import io.netty.buffer.ByteBuf;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * What a relay puts before the bytes of a connection it carries to the proxy for a sandbox: the one place where the
 * wire format is written ({@link #explicit}, {@link #transparent}, {@link #dns}: the process sandbox's relay on the
 * host, a VM bridge's relay on its gateway) and read ({@link #read}: the proxy's main listener, and the transparent
 * listener of a run's own proxy). Every header is one PROXY protocol v2 header, written by the relay before any byte
 * of the sandbox's, so nothing the sandbox sends can take its place:
 *
 * <pre>
 * 12 bytes   signature 0D 0A 0D 0A 00 0D 0A 51 55 49 54 0A
 *  1 byte    0x20 LOCAL (an explicit or a DNS connection) or 0x21 PROXY (a transparent connection)
 *  1 byte    family: 0x00 with LOCAL; 0x11 (TCP over IPv4) or 0x21 (TCP over IPv6) with PROXY
 *  2 bytes   the length of the rest, big-endian, at most {@value #MAX_LENGTH} - 16
 *  PROXY only: source address (zeros: the relay vouches for nothing about it), destination address, source port 0,
 *            destination port: where the sandbox's connection was headed, as the relay learned it from the kernel
 *            (the connection tracking of the sandbox's own namespace, or of the host for a VM bridge)
 *  TLV 0xE1  ({@value #TOKEN_TLV}) the sandbox's registration token ({@link SandboxRegistry}), ASCII; at most one
 *  TLV 0xE2  ({@value #DNS_TLV}) LOCAL only, value one byte of flags: the rest of the connection is DNS, each message
 *            with its two-byte length first as over TCP (RFC 1035 4.2.2), questions that arrived over UDP or TCP;
 *            flag 0x01 ({@value #DNS_AAAA}): the sandbox captures the IPv6 prefix, so AAAA questions get answers
 * </pre>
 *
 * So there are three kinds ({@link Kind}): {@code LOCAL} with a token is the sandbox's explicit proxy connection
 * (HTTP, CONNECT); {@code PROXY} is a transparent connection to the destination (decided as a CONNECT to it, a
 * synthetic address standing for the name the sandbox was given); {@code LOCAL} with the DNS TLV carries DNS
 * questions. On the shared proxy's main listener each needs a token of a live registration and then is that
 * sandbox's in every decision and record; a second header after it is the sandbox's own and is refused. Other TLV
 * types are skipped, as the PROXY protocol says. The listener the header arrives on must be reachable by relays
 * alone for the destination to be believed (the main listener: only with a token, which the sandbox never holds).
 *
 * @param token   the registration's token ("" when the header had none)
 * @param destination the original destination ({@link Kind#TRANSPARENT} only, else null)
 * @param aaaa    {@link Kind#DNS} only: AAAA questions get synthetic IPv6 answers
 */
public record RelayHeader(Kind kind, String token, /* @Nullable */ InetSocketAddress destination, boolean aaaa) {

    /** What the connection after the header is. */
    public enum Kind { EXPLICIT, TRANSPARENT, DNS }

    /** The TLV type (of the range for application use) whose value is a registration's token. */
    public static final int TOKEN_TLV = 0xE1;
    /** The TLV type that makes a {@code LOCAL} connection a stream of DNS messages. */
    public static final int DNS_TLV = 0xE2;
    /** The DNS TLV's flag: AAAA questions are answered with synthetic IPv6 addresses. */
    public static final int DNS_AAAA = 0x01;
    /** The longest header read: addresses of the largest family and a token, with room to spare. */
    public static final int MAX_LENGTH = 512;

    /** How long the signature is: what must have arrived before bytes that agree with it so far are one. */
    public static final int SIGNATURE_LENGTH = 12;
    private static final byte[] SIGNATURE = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
    private static final int LOCAL = 0x20;
    private static final int PROXY = 0x21;
    private static final int TCP4 = 0x11;
    private static final int TCP6 = 0x21;

    public RelayHeader {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(token, "token");
        if ((kind == Kind.TRANSPARENT) != (destination != null)) {
            throw new IllegalArgumentException("destination: " + destination + " (expected: one for a transparent "
                    + "connection only)");
        }
    }

    /** What {@link #read} found. */
    public sealed interface Read {
        /** More bytes are needed. */
        record Incomplete() implements Read {}

        /** Not a header of this format: the one line says what is wrong. */
        record Malformed(String why) implements Read {}

        /** A whole header, consumed from the buffer. */
        record Complete(RelayHeader header) implements Read {}
    }

    /** The header of an explicit connection of the sandbox whose registration {@code token} is. */
    public static byte[] explicit(String token) {
        return local(tlv(TOKEN_TLV, token.getBytes(StandardCharsets.US_ASCII)));
    }

    /** The header of a DNS connection of the sandbox whose registration {@code token} is. */
    public static byte[] dns(String token, boolean aaaa) {
        byte[] t = tlv(TOKEN_TLV, token.getBytes(StandardCharsets.US_ASCII));
        byte[] d = tlv(DNS_TLV, new byte[] {(byte) (aaaa ? DNS_AAAA : 0)});
        return local(ByteBuffer.allocate(t.length + d.length).put(t).put(d).array());
    }

    /** The header of a transparent connection to {@code destination}, with {@code token} when there is one. */
    public static byte[] transparent(InetSocketAddress destination, /* @Nullable */ String token) {
        byte[] tlv = token == null ? new byte[0] : tlv(TOKEN_TLV, token.getBytes(StandardCharsets.US_ASCII));
        byte[] to = destination.getAddress().getAddress();
        int addresses = 2 * to.length + 4;
        return ByteBuffer.allocate(16 + addresses + tlv.length).put(SIGNATURE).put((byte) PROXY)
                .put((byte) (to.length == 16 ? TCP6 : TCP4)).putShort((short) (addresses + tlv.length))
                .put(new byte[to.length]).put(to).putShort((short) 0).putShort((short) destination.getPort())
                .put(tlv).array();
    }

    private static byte[] local(byte[] tlvs) {
        return ByteBuffer.allocate(16 + tlvs.length).put(SIGNATURE).put((byte) LOCAL).put((byte) 0)
                .putShort((short) tlvs.length).put(tlvs).array();
    }

    private static byte[] tlv(int type, byte[] value) {
        return ByteBuffer.allocate(3 + value.length).put((byte) type).putShort((short) value.length).put(value)
                .array();
    }

    /** Whether the readable bytes agree with {@code prefix} as far as both go. */
    public static boolean agrees(ByteBuf in, byte[] prefix) {
        int n = Math.min(in.readableBytes(), prefix.length);
        for (int i = 0; i < n; i++) {
            if (in.getByte(in.readerIndex() + i) != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /** Whether the readable bytes may begin a header (they agree with the signature so far). */
    public static boolean mayBegin(ByteBuf in) {
        return agrees(in, SIGNATURE);
    }

    /** Reads one header from {@code in}; consumes it only when {@link Read.Complete}. */
    public static Read read(ByteBuf in) {
        if (!mayBegin(in)) {
            return new Read.Malformed("no PROXY v2 signature");
        }
        if (in.readableBytes() < 16) {
            return new Read.Incomplete();
        }
        int start = in.readerIndex();
        int command = in.getUnsignedByte(start + 12);
        int family = in.getUnsignedByte(start + 13);
        int length = in.getUnsignedShort(start + 14);
        int addresses = command == LOCAL && family == 0 ? 0
                : command == PROXY && family == TCP4 ? 12 : command == PROXY && family == TCP6 ? 36 : -1;
        if (addresses < 0) {
            return new Read.Malformed("command 0x" + Integer.toHexString(command) + " family 0x"
                    + Integer.toHexString(family) + " (expected: LOCAL unspecified, or PROXY over TCP)");
        }
        if (length < addresses || 16 + length > MAX_LENGTH) {
            return new Read.Malformed("length " + length + " (expected: " + addresses + ".." + (MAX_LENGTH - 16) + ")");
        }
        if (in.readableBytes() < 16 + length) {
            return new Read.Incomplete();
        }
        String token = null;
        int dns = -1;
        int at = start + 16 + addresses;
        int end = start + 16 + length;
        while (at < end) {
            int size = at + 3 > end ? -1 : in.getUnsignedShort(at + 1);
            if (size < 0 || at + 3 + size > end) {
                return new Read.Malformed("a TLV runs past the header's end");
            }
            int type = in.getUnsignedByte(at);
            if (type == TOKEN_TLV) {
                if (token != null) {
                    return new Read.Malformed("two tokens");
                }
                token = in.toString(at + 3, size, StandardCharsets.US_ASCII);
            } else if (type == DNS_TLV) {
                if (dns >= 0 || size != 1 || command != LOCAL) {
                    return new Read.Malformed("a DNS TLV that is not one byte of a LOCAL header, once");
                }
                dns = in.getUnsignedByte(at + 3);
            }
            at += 3 + size;
        }
        InetSocketAddress destination = null;
        if (command == PROXY) {
            int size = family == TCP4 ? 4 : 16;
            byte[] to = new byte[size];
            in.getBytes(start + 16 + size, to);
            int port = in.getUnsignedShort(start + 16 + 2 * size + 2);
            destination = new InetSocketAddress(address(to), port);
        }
        in.skipBytes(16 + length);
        Kind kind = command == PROXY ? Kind.TRANSPARENT : dns >= 0 ? Kind.DNS : Kind.EXPLICIT;
        return new Read.Complete(new RelayHeader(kind, token == null ? "" : token, destination,
                dns >= 0 && (dns & DNS_AAAA) != 0));
    }

    private static InetAddress address(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes are always an address", e);
        }
    }

    @Override
    public String toString() {
        return "RelayHeader[" + kind + ", token=" + (token.isEmpty() ? "none" : "hidden")
                + (destination == null ? "" : ", to " + destination) + (aaaa ? ", aaaa" : "") + "]";
    }
}
