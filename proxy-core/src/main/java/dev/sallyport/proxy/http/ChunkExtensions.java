package dev.sallyport.proxy.http;

/**
 * The chunk extensions after a chunk size, byte by byte, as RFC 9112 7.1.1 writes them without whitespace:
 * {@code *( ";" token [ "=" ( token / quoted-string ) ] )}. Stricter than Netty's decoder behind the guard, so
 * that an extension the guard passes never fails there (found by {@code HttpFramingFuzzTest}).
 */
final class ChunkExtensions {

    private enum State { NAME_START, NAME, VALUE_START, TOKEN, QUOTED, ESCAPE, QUOTED_END }

    private State state = State.NAME_START;

    /** Feeds the byte after a {@code ;} or within the extensions; false when it breaks the syntax. */
    boolean accept(byte b) {
        State next = switch (state) {
            case NAME_START -> Tokens.isTchar(b) ? State.NAME : null;
            case NAME -> b == ';' ? State.NAME_START : b == '=' ? State.VALUE_START : Tokens.isTchar(b) ? State.NAME : null;
            case VALUE_START -> b == '"' ? State.QUOTED : Tokens.isTchar(b) ? State.TOKEN : null;
            case TOKEN -> b == ';' ? State.NAME_START : Tokens.isTchar(b) ? State.TOKEN : null;
            case QUOTED -> b == '"' ? State.QUOTED_END : b == '\\' ? State.ESCAPE : quotedText(b) ? State.QUOTED : null;
            case ESCAPE -> quotedText(b) || b == '"' || b == '\\' ? State.QUOTED : null;
            case QUOTED_END -> b == ';' ? State.NAME_START : null;
        };
        if (next == null) {
            return false;
        }
        state = next;
        return true;
    }

    /** Whether the extensions may end here (at the CR of the chunk line). */
    boolean complete() {
        return state == State.NAME || state == State.TOKEN || state == State.QUOTED_END;
    }

    /** qdtext without obs-text: HTAB, SP and the visible characters but {@code "} and {@code \}. */
    private static boolean quotedText(byte b) {
        return b == '\t' || (b >= 0x20 && b < 0x7f && b != '"' && b != '\\');
    }
}
