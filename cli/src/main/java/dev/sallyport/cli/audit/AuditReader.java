package dev.sallyport.cli.audit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

/**
 * Reads one audit line (a flat JSON object) into an {@link AuditRecord}. Unknown fields are skipped, so newer
 * proxies can add fields without breaking older summaries.
 */
public final class AuditReader {

    private final JsonFactory json = JsonFactory.builder().build();

    /**
     * Reads every record of files in order (a file {@code -} is standard input), skipping blank lines; a line that
     * is not a record is named on err ({@code FILE:LINE: why}). Returns how many were not records.
     */
    public int readAll(List<String> files, PrintWriter err, Consumer<AuditRecord> each) {
        int bad = 0;
        for (String file : files) {
            try (BufferedReader in = file.equals("-")
                    ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                    : Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8)) {
                String line;
                int number = 0;
                while ((line = in.readLine()) != null) {
                    number++;
                    if (line.isBlank()) {
                        continue;
                    }
                    try {
                        each.accept(parse(line));
                    } catch (IOException e) {
                        bad++;
                        err.printf("%s:%d: %s (expected: one JSON audit record per line)%n", file, number, e.getMessage());
                    }
                }
            } catch (NoSuchFileException e) {
                throw new UncheckedIOException(file + ": no such file (expected: an audit log written by 'sallyport"
                        + " proxy')", e);
            } catch (IOException e) {
                throw new UncheckedIOException(file + ": cannot read: " + e.getMessage(), e);
            }
        }
        return bad;
    }

    /** Parses a line; throws IOException with a short reason when it is not one JSON object. */
    public AuditRecord parse(String line) throws IOException {
        try (JsonParser p = json.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            String ts = null, event = null, host = null, decision = null, rule = null, reason = null;
            String method = null, path = null, identity = null, tls = null;
            String ecosystem = null, packageName = null, version = null, repository = null;
            Long port = null;
            Long status = null;
            List<String> secrets = null;
            List<String> forwarded = null;
            List<String> refsRefused = null;
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
                    case "method" -> method = text(p, value);
                    case "path" -> path = text(p, value);
                    case "identity" -> identity = text(p, value);
                    case "tls" -> tls = text(p, value);
                    case "ecosystem" -> ecosystem = text(p, value);
                    case "package" -> packageName = text(p, value);
                    case "version" -> version = text(p, value);
                    case "secrets" -> secrets = strings(p, value);
                    case "placeholders_forwarded" -> forwarded = strings(p, value);
                    case "repository" -> repository = text(p, value);
                    case "refs_refused" -> refsRefused = strings(p, value);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new IOException("trailing data after the JSON object");
            }
            return new AuditRecord(ts, event, host, port, status, decision, rule, reason, secrets, forwarded, method, path,
                    identity, tls, ecosystem, packageName, version, repository, refsRefused);
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
