package dev.sallyport.proxy.websocket;

import dev.sallyport.proxy.inject.ResponseDecodeException;
import dev.sallyport.proxy.inject.ResponseScrubber;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * On the upstream side of a WebSocket, before the relay to the client: reads the server's frames and passes on new
 * ones with every real value replaced, per message. The payloads of a message's first frame and its continuations
 * are scrubbed as one stream (a value split across fragments, with pings between them, is still found), and the
 * output is framed again: what the scrubber settled by the end of each read (or before a control frame) goes out
 * as one fragment of the same message (RFC 6455 lets an intermediary re-fragment when no extension is in use),
 * the final one when the message ends; a message that arrived whole in one read leaves as one frame. Control frames are
 * scrubbed whole. Nothing the server sent passes unread: memory stays at the scrubber's window per message, with no
 * cap on message or frame size. A frame the reader refuses closes the WebSocket: the client gets a close frame
 * (1002), the server connection is closed. When a chunk produced nothing it asks for the next read itself.
 */
public final class MessageScrubHandler extends ChannelInboundHandlerAdapter implements FrameSink {

    /** Between messages, inside one (its scrubber, opcode, whether its first frame went out), or closed. */
    private sealed interface Message {
        record Between() implements Message {}
        record Within(ResponseScrubber scrubber, int opcode, boolean started) implements Message {}
        record Closed() implements Message {}
    }

    private final FrameReader reader = new FrameReader(FrameReader.Sender.SERVER);
    private final Supplier<ResponseScrubber> scrubbers;
    private final List<ByteBuf> out = new ArrayList<>();
    /** Scrubbed payload of the current message not framed yet: framed at a control frame, its end, or the read's end. */
    private final List<ByteBuf> settled = new ArrayList<>();
    private Message message = new Message.Between();
    private ChannelHandlerContext ctx;

    /** {@code scrubbers} gives a fresh scrubber per message, with the values known at that moment. */
    public MessageScrubHandler(Supplier<ResponseScrubber> scrubbers) {
        this.scrubbers = scrubbers;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        ctx = context;
    }

    @Override
    public void channelRead(ChannelHandlerContext c, Object msg) {
        if (!(msg instanceof ByteBuf raw)) {
            c.fireChannelRead(msg);
            return;
        }
        if (message instanceof Message.Closed) {
            raw.release();
            return;
        }
        ProtocolError error;
        try {
            error = reader.feed(raw, this);
        } catch (ScrubFailed e) {
            error = new ProtocolError(ProtocolError.INTERNAL_ERROR, "message could not be scrubbed");
        } finally {
            raw.release();
        }
        if (error == null) {
            frameSettled(false);
        }
        boolean emitted = !out.isEmpty();
        if (error != null) {
            out.forEach(ByteBuf::release);
            out.clear();
            endMessage();
            message = new Message.Closed();
            c.fireChannelRead(FrameWriter.close(c.alloc(), error));
            c.close();
            return;
        }
        out.forEach(c::fireChannelRead);
        out.clear();
        if (!emitted) {
            c.read();
        }
    }

    @Override
    public void messageStart(int opcode) {
        message = new Message.Within(scrubbers.get(), opcode, false);
    }

    @Override
    public void payload(ByteBuf bytes) {
        try {
            ((Message.Within) message).scrubber().onContent(bytes, settled::add);
        } catch (ResponseDecodeException e) {
            throw new ScrubFailed(e);
        }
    }

    @Override
    public void messageEnd() {
        try {
            ((Message.Within) message).scrubber().onLast(EmptyHttpHeaders.INSTANCE, settled::add);
        } catch (ResponseDecodeException e) {
            throw new ScrubFailed(e);
        }
        frameSettled(true);
        endMessage();
    }

    @Override
    public void control(int opcode, ByteBuf payload) {
        frameSettled(false);    // what came before it, in order
        ResponseScrubber scrubber = scrubbers.get();
        CompositeByteBuf whole = ctx.alloc().compositeBuffer();
        try {
            scrubber.onContent(payload, b -> whole.addComponent(true, b));
            scrubber.onLast(EmptyHttpHeaders.INSTANCE, b -> whole.addComponent(true, b));
        } catch (ResponseDecodeException e) {
            whole.release();
            throw new ScrubFailed(e);
        } finally {
            scrubber.close();
        }
        if (whole.readableBytes() > 125) {      // replacements keep lengths; fail closed should that ever change
            whole.release();
            throw new ScrubFailed(null);
        }
        out.add(FrameWriter.frame(ctx.alloc(), true, opcode, whole));
    }

    /**
     * Frames what the scrubber settled of the current message since the last frame: one frame, final if
     * {@code fin} (then even when empty), nothing when there is nothing and the message goes on.
     */
    private void frameSettled(boolean fin) {
        if (!(message instanceof Message.Within m) || (settled.isEmpty() && !fin)) {
            return;
        }
        CompositeByteBuf payload = ctx.alloc().compositeBuffer(Math.max(1, settled.size()));
        settled.forEach(b -> payload.addComponent(true, b));
        settled.clear();
        out.add(FrameWriter.frame(ctx.alloc(), fin, m.started() ? FrameReader.CONTINUATION : m.opcode(), payload));
        message = new Message.Within(m.scrubber(), m.opcode(), true);
    }

    private void endMessage() {
        settled.forEach(ByteBuf::release);
        settled.clear();
        if (message instanceof Message.Within m) {
            m.scrubber().close();
            message = new Message.Between();
        }
    }

    /**
     * The server closed: a message it did not finish is dropped with what the scrubber held back (bytes that
     * may begin a value are never sent unscrubbed).
     */
    @Override
    public void channelInactive(ChannelHandlerContext c) {
        endMessage();
        c.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext c) {
        endMessage();
        out.forEach(ByteBuf::release);
        out.clear();
    }

    /** A scrubber failure inside a sink call (a body is never decoded here, so this should not happen). */
    private static final class ScrubFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ScrubFailed(Throwable cause) {
            super("a WebSocket message could not be scrubbed", cause, false, false);
        }
    }
}
