package dev.sallyport.proxy.registry;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * Token copies that make no {@code String} of a value (a package document's texts are most of its bytes: copied
 * from the parser's buffer straight into the generator), and an output whose bytes are handed over without a copy.
 */
final class JsonCopy {

    private JsonCopy() {}

    /** Copies the value at the parser's current token (a scalar, or a whole object or array). */
    static void value(JsonParser p, JsonGenerator g) throws IOException {
        int depth = 0;
        do {
            JsonToken t = p.currentToken();
            switch (t) {
                case START_OBJECT -> {
                    g.writeStartObject();
                    depth++;
                }
                case START_ARRAY -> {
                    g.writeStartArray();
                    depth++;
                }
                case END_OBJECT -> {
                    g.writeEndObject();
                    depth--;
                }
                case END_ARRAY -> {
                    g.writeEndArray();
                    depth--;
                }
                case FIELD_NAME -> g.writeFieldName(p.currentName());
                case VALUE_STRING -> g.writeString(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
                default -> g.copyCurrentEvent(p);
            }
        } while (depth > 0 && p.nextToken() != null);
    }

    /**
     * Copies the value at the parser's current token from {@code source} (the bytes the parser reads) as they are: an
     * object or array as one slice of the source, written to {@code out} behind the generator's back (the generator
     * writes the separator before it and is flushed), a scalar as {@link #value} does. Nothing is decoded.
     */
    static void slice(JsonParser p, JsonGenerator g, byte[] source, Output out) throws IOException {
        JsonToken t = p.currentToken();
        if (t != JsonToken.START_OBJECT && t != JsonToken.START_ARRAY) {
            value(p, g);
            return;
        }
        long start = p.currentTokenLocation().getByteOffset();
        p.skipChildren();
        long end = p.currentLocation().getByteOffset();
        if (start < 0 || end <= start || end > source.length || source[(int) start] != (t == JsonToken.START_OBJECT
                ? '{' : '[') || source[(int) end - 1] != (t == JsonToken.START_OBJECT ? '}' : ']')) {
            throw new IOException("cannot locate a value in the document (offsets " + start + ".." + end + ")");
        }
        g.writeRawValue("");
        g.flush();
        out.write(source, (int) start, (int) (end - start));
    }

    /** A byte output whose array is taken as it is. */
    static final class Output extends ByteArrayOutputStream {
        Output(int size) {
            super(Math.max(size, 64));
        }

        /** The array written to (valid up to {@link #size()}). */
        byte[] array() {
            return buf;
        }
    }
}
