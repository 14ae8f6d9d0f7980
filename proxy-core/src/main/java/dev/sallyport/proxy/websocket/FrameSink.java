package dev.sallyport.proxy.websocket;

import io.netty.buffer.ByteBuf;

/** What a {@link FrameReader} found, in stream order. Buffers passed in belong to the sink (release them). */
interface FrameSink {

    /** The first frame of a text or binary message began ({@code opcode} {@link FrameReader#TEXT} or {@code BINARY}). */
    void messageStart(int opcode);

    /** Unmasked payload bytes of the current message, across its fragments (never empty). */
    void payload(ByteBuf bytes);

    /** The final fragment of the current message ended. */
    void messageEnd();

    /** A whole control frame (close, ping, pong), unmasked; it may come between the fragments of a message. */
    void control(int opcode, ByteBuf payload);
}
