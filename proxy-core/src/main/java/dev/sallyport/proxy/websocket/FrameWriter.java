package dev.sallyport.proxy.websocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Writes server-to-client frames (unmasked, RFC 6455 5.2) with the shortest length form for their payload. The
 * proxy only ever writes frames toward the client: toward the server it forwards the client's own bytes or closes.
 */
final class FrameWriter {

    private FrameWriter() {}

    /** One frame around {@code payload} (taken over: the result owns it). */
    static ByteBuf frame(ByteBufAllocator alloc, boolean fin, int opcode, ByteBuf payload) {
        int n = payload.readableBytes();
        ByteBuf head = alloc.buffer(10);
        head.writeByte((fin ? 0x80 : 0) | opcode);
        if (n < 126) {
            head.writeByte(n);
        } else if (n < 65536) {
            head.writeByte(126).writeShort(n);
        } else {
            head.writeByte(127).writeLong(n);
        }
        return alloc.compositeBuffer(2).addComponents(true, head, payload);
    }

    /** A close frame with {@code code} and {@code reason} (ASCII, at most 123 bytes). */
    static ByteBuf close(ByteBufAllocator alloc, ProtocolError error) {
        byte[] reason = error.reason().getBytes(StandardCharsets.US_ASCII);
        ByteBuf payload = alloc.buffer(2 + reason.length).writeShort(error.code()).writeBytes(reason);
        return frame(alloc, true, FrameReader.CLOSE, payload);
    }
}
