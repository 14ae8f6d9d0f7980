package dev.sallyport.proxy.websocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Follows RFC 6455 framing on one direction of a WebSocket as the bytes arrive, without waiting for whole frames:
 * headers in all three length forms (7, 16 and 64 bits), masking as the sending side requires, data payloads
 * streamed to a {@link FrameSink} unmasked, chunk by chunk, with messages made of a first frame and continuation
 * frames, and control frames (at most 125 bytes, never fragmented) whole, also between fragments.
 *
 * <p>Refused with a {@link ProtocolError} (1002), after which it reads nothing more: reserved bits set (no
 * extension was negotiated: a compressed frame cannot be read), reserved opcodes, a frame masked the wrong way
 * for its side, a fragmented or oversized control frame, a continuation without a message, a new message inside
 * another, a 64-bit length with its top bit set. Memory: a 14-byte header and one control payload. Not
 * thread-safe: one per direction of one connection.
 */
final class FrameReader {

    static final int CONTINUATION = 0x0;
    static final int TEXT = 0x1;
    static final int BINARY = 0x2;
    static final int CLOSE = 0x8;
    static final int PING = 0x9;
    static final int PONG = 0xA;

    /** Who sends the frames read: clients must mask every frame, servers must not mask any. */
    enum Sender { CLIENT, SERVER }

    /** Where the reader is in the byte stream. */
    private sealed interface State {
        /** Reading a frame header; {@code have} of its bytes so far. */
        record Head(int have) implements State {}
        /** Reading a data frame's payload: {@code remaining} bytes, masked with {@code mask} from {@code maskAt}. */
        record Data(long remaining, byte[] mask, int maskAt, boolean fin) implements State {}
        /** Reading a control frame's payload into {@code payload}, {@code have} bytes so far. */
        record Control(int opcode, byte[] payload, int have, byte[] mask) implements State {}
        /** Refused; nothing more is read. */
        record Failed(ProtocolError error) implements State {}
    }

    private final Sender sender;
    private final byte[] head = new byte[14];
    private State state = new State.Head(0);
    private boolean inMessage;

    FrameReader(Sender sender) {
        this.sender = sender;
    }

    /** True between messages with no frame begun: everything read so far was a whole message or control frame. */
    boolean atMessageBoundary() {
        return !inMessage && state instanceof State.Head h && h.have() == 0;
    }

    /** Reads {@code in}'s readable bytes (its reader index and count are left alone); the refusal, or null. */
    ProtocolError feed(ByteBuf in, FrameSink sink) {
        int pos = in.readerIndex();
        int end = in.writerIndex();
        while (pos < end || (state instanceof State.Data d && d.remaining() == 0)
                || (state instanceof State.Control c && c.have() == c.payload().length)) {
            switch (state) {
                case State.Failed f -> {
                    return f.error();
                }
                case State.Head h -> {
                    head[h.have()] = in.getByte(pos++);
                    state = header(h.have() + 1, sink);
                }
                case State.Data d -> {
                    int n = (int) Math.min(d.remaining(), end - pos);
                    if (n > 0) {
                        sink.payload(unmask(in, pos, n, d.mask(), d.maskAt()));
                        pos += n;
                    }
                    if (d.remaining() == n) {
                        state = new State.Head(0);
                        if (d.fin()) {
                            inMessage = false;
                            sink.messageEnd();
                        }
                    } else {
                        state = new State.Data(d.remaining() - n, d.mask(), (d.maskAt() + n) & 3, d.fin());
                    }
                }
                case State.Control c -> {
                    int n = Math.min(c.payload().length - c.have(), end - pos);
                    in.getBytes(pos, c.payload(), c.have(), n);
                    pos += n;
                    if (c.have() + n < c.payload().length) {
                        state = new State.Control(c.opcode(), c.payload(), c.have() + n, c.mask());
                    } else {
                        byte[] p = c.payload();
                        if (c.mask() != null) {
                            for (int i = 0; i < p.length; i++) {
                                p[i] ^= c.mask()[i & 3];
                            }
                        }
                        state = new State.Head(0);
                        sink.control(c.opcode(), in.alloc().buffer(p.length).writeBytes(p));
                    }
                }
            }
        }
        return state instanceof State.Failed f ? f.error() : null;
    }

    /** After {@code have} header bytes: the next state (still the header, a payload, or a refusal). */
    private State header(int have, FrameSink sink) {
        byte[] b = head;
        if (have < 2) {
            return new State.Head(have);
        }
        boolean fin = (b[0] & 0x80) != 0;
        int opcode = b[0] & 0x0F;
        boolean masked = (b[1] & 0x80) != 0;
        int len7 = b[1] & 0x7F;
        if (have == 2) {
            ProtocolError e = firstTwo(b[0], opcode, fin, masked, len7);
            if (e != null) {
                return new State.Failed(e);
            }
        }
        int lengthBytes = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
        int total = 2 + lengthBytes + (masked ? 4 : 0);
        if (have < total) {
            return new State.Head(have);
        }
        long length = len7;
        if (lengthBytes > 0) {
            length = 0;
            for (int i = 2; i < 2 + lengthBytes; i++) {
                length = length << 8 | (b[i] & 0xFF);
            }
            if (length < 0) {
                return new State.Failed(new ProtocolError(ProtocolError.TOO_BIG, "payload length over 2^63 bytes"));
            }
        }
        byte[] mask = masked ? new byte[] {b[total - 4], b[total - 3], b[total - 2], b[total - 1]} : null;
        if (opcode >= CLOSE) {
            return new State.Control(opcode, new byte[(int) length], 0, mask);
        }
        if (opcode != CONTINUATION) {
            inMessage = true;
            sink.messageStart(opcode);
        }
        return new State.Data(length, mask, 0, fin);
    }

    /** Checks what the first two header bytes say; the refusal, or null. */
    private ProtocolError firstTwo(byte b0, int opcode, boolean fin, boolean masked, int len7) {
        String fault = null;
        if ((b0 & 0x70) != 0) {
            fault = "reserved bits set in a frame (expected: none, no extension was negotiated)";
        } else if ((opcode > BINARY && opcode < CLOSE) || opcode > PONG) {
            fault = "reserved opcode " + opcode;
        } else if (masked != (sender == Sender.CLIENT)) {
            fault = sender == Sender.CLIENT ? "unmasked frame from the client (expected: every client frame masked)"
                    : "masked frame from the server (expected: server frames unmasked)";
        } else if (opcode >= CLOSE && (!fin || len7 > 125)) {
            fault = "fragmented or oversized control frame (expected: final, at most 125 bytes)";
        } else if (opcode == CONTINUATION && !inMessage) {
            fault = "continuation frame without a message to continue";
        } else if ((opcode == TEXT || opcode == BINARY) && inMessage) {
            fault = "new message before the previous one ended";
        }
        return fault == null ? null : new ProtocolError(ProtocolError.PROTOCOL_ERROR, fault);
    }

    private static ByteBuf unmask(ByteBuf in, int pos, int n, byte[] mask, int maskAt) {
        if (mask == null) {
            return in.retainedSlice(pos, n);
        }
        byte[] bytes = new byte[n];
        in.getBytes(pos, bytes);
        for (int i = 0; i < n; i++) {
            bytes[i] ^= mask[(maskAt + i) & 3];
        }
        return Unpooled.wrappedBuffer(bytes);
    }

    @Override
    public String toString() {
        return "FrameReader[sender=" + sender + ", state=" + state.getClass().getSimpleName() + "]";
    }
}
