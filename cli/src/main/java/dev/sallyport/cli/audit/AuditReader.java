package dev.sallyport.cli.audit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

/**
 * Reads one audit line (a flat JSON object) into an {@link AuditRecord}. Unknown fields are skipped, so newer
 * proxies can add fields without breaking older summaries.
 */
public final class AuditReader {

    private final JsonFactory json = JsonFactory.builder().build();

    /** Parses a line; throws IOException with a short reason when it is not one JSON object. */
    public AuditRecord parse(String line) throws IOException {
        try (JsonParser p = json.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            String ts = null, event = null, host = null, decision = null, rule = null, reason = null;
            Long port = null;
            Long status = null;
            List<String> secrets = null;
            List<String> forwarded = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "ts" -> ts = text(p, value);
                    case "event" -> event = text(p, value);
                    case "host" -> host = text(p, value);
                    case "port" -> port = number(p, value);
                    case "status" -> status = number(p, value);
                    case "decision" -> decision = text(p, value);
                    case "rule" -> rule = text(p, value);
                    case "reason" -> reason = text(p, value);
                    case "secrets" -> secrets = strings(p, value);
                    case "placeholders_forwarded" -> forwarded = strings(p, value);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new IOException("trailing data after the JSON object");
            }
            return new AuditRecord(ts, event, host, port, status, decision, rule, reason, secrets, forwarded);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(e.getOriginalMessage(), e);
        }
    }

    private static String text(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
            p.skipChildren();
            return null;
        }
        return p.getText();
    }

    private static Long number(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NUMBER_INT) {
            return p.getLongValue();
        }
        p.skipChildren();
        return null;
    }

    private static List<String> strings(JsonParser p, JsonToken value) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            p.skipChildren();
            return null;
        }
        List<String> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (p.currentToken() == JsonToken.VALUE_STRING) {
                out.add(p.getText());
            } else {
                p.skipChildren();
            }
        }
        return out;
    }
}
