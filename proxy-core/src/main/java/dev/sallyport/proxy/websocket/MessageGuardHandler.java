package dev.sallyport.proxy.websocket;

import dev.sallyport.proxy.inject.InjectionResult.Refused;
import dev.sallyport.proxy.inject.RequestBodyGuard;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * On the client side of a WebSocket, before the relay to the server: reads the client's frames and checks every
 * message, unmasked and across its fragments, with the same rule a request body gets ({@link RequestBodyGuard}: a
 * placeholder or a real value toward a host it is not bound to, or a placeholder where it is never swapped);
 * control frames are checked one by one. The client's bytes go on unchanged, but only once everything they carry
 * is judged: at the end of each message (a placeholder can end in any fragment; the check finds it only once enough
 * bytes after its start were read), at most {@link #MAX_HELD} bytes of one message held.
 * A refusal closes the WebSocket: the client gets a close frame (1008, the reason code as its reason), the server
 * connection is closed (it may be inside a frame, so it gets no close frame), and {@code refused} records it. A
 * frame the reader refuses is handled the same way with 1002.
 */
public final class MessageGuardHandler extends ChannelInboundHandlerAdapter implements FrameSink {

    /** Between messages, inside one (its guard), or closed after a refusal. */
    private sealed interface Message {
        record Between() implements Message {}
        record Within(RequestBodyGuard guard) implements Message {}
        record Closed() implements Message {}
    }

    private final FrameReader reader = new FrameReader(FrameReader.Sender.CLIENT);
    private final Supplier<RequestBodyGuard> guards;
    private final Consumer<Refused> refused;
    private final Channel upstream;
    /**
     * The most of one message's bytes held until the message is judged whole (a placeholder may end in any
     * fragment, so a message goes on only once its last fragment was read); beyond it the WebSocket closes (1009).
     */
    static final int MAX_HELD = 1 << 20;

    private final ArrayDeque<ByteBuf> held = new ArrayDeque<>();
    private int heldBytes;
    private Message message = new Message.Between();
    private Refused refusal;

    /** {@code guards} gives a fresh guard per message; {@code refused} audits a refusal (on this event loop). */
    public MessageGuardHandler(Supplier<RequestBodyGuard> guards, Consumer<Refused> refused, Channel upstream) {
        this.guards = guards;
        this.refused = refused;
        this.upstream = upstream;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf raw)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (message instanceof Message.Closed) {
            raw.release();
            return;
        }
        ProtocolError error = reader.feed(raw, this);
        if (refusal == null && error == null) {
            held.add(raw);
            heldBytes += raw.readableBytes();
            if (reader.atMessageBoundary()) {     // every byte held is judged now: on to the server, in order
                heldBytes = 0;
                while (!held.isEmpty()) {
                    ctx.fireChannelRead(held.poll());
                }
                return;
            }
            if (heldBytes <= MAX_HELD) {
                ctx.read();     // nothing went on, so the relay will not ask: ask for the rest of the message
                return;
            }
            error = new ProtocolError(ProtocolError.TOO_BIG, "message too big to check (at most " + (MAX_HELD >> 20)
                    + " MiB while secrets are in force)");
        } else {
            raw.release();
        }
        releaseHeld();
        message = new Message.Closed();
        if (refusal != null) {
            error = new ProtocolError(ProtocolError.POLICY_VIOLATION, refusal.reason());
            refused.accept(refusal);
        }
        ctx.writeAndFlush(FrameWriter.close(ctx.alloc(), error)).addListener(ChannelFutureListener.CLOSE);
        upstream.close();
    }

    private void releaseHeld() {
        held.forEach(ByteBuf::release);
        held.clear();
        heldBytes = 0;
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseHeld();
    }

    @Override
    public void messageStart(int opcode) {
        message = new Message.Within(guards.get());
    }

    @Override
    public void payload(ByteBuf bytes) {
        try {
            if (refusal == null && message instanceof Message.Within m) {
                refusal = m.guard().check(bytes);
            }
        } finally {
            bytes.release();
        }
    }

    @Override
    public void messageEnd() {
        if (refusal == null && message instanceof Message.Within m) {
            refusal = m.guard().finish();
        }
        message = new Message.Between();
    }

    @Override
    public void control(int opcode, ByteBuf payload) {
        try {
            if (refusal == null) {
                RequestBodyGuard guard = guards.get();
                refusal = guard.check(payload);
                if (refusal == null) {
                    refusal = guard.finish();
                }
            }
        } finally {
            payload.release();
        }
    }
}
