package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sallyport.proxy.audit.AuditKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The published schema of the audit record (docs/audit-record.schema.json) against every record a real proxy
 * writes: allowed, denied and refused requests, tunnels, checkpoints, a rotation. The schema uses only the
 * keywords checked here (type, enum, pattern, minimum, maximum, items, properties, required,
 * additionalProperties: false), so that a record with a field the schema does not name fails.
 */
class AuditSchemaTest {

    private static final Path SCHEMA = Path.of("..", "docs", "audit-record.schema.json");
    private static final JsonFactory JSON = JsonFactory.builder().build();

    @TempDir
    Path dir;

    @Test
    void everyRecordARealProxyWritesValidatesAgainstThePublishedSchema() throws Exception {
        Map<String, Object> schema = object(read(Files.readString(SCHEMA)));
        RealAuditLog.write(dir, AuditKey.generate(), ", rotate_bytes: 4096", RealAuditLog.OK_PATHS, List.of(List.of(List.of("/ok/1", "/denied?token=x"), List.of("/ok/2", "/ok/3")),
                List.of(List.of("/ok/4"))));
        List<Path> files = new ArrayList<>();
        try (var all = Files.newDirectoryStream(dir, "audit.jsonl*")) {
            all.forEach(files::add);
        }
        files.add(Path.of("..", "docs", "audit-example.jsonl"));
        long checked = 0;
        for (Path file : files) {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                List<String> problems = new ArrayList<>();
                check(schema, read(lines.get(i)), "", problems);
                assertThat(problems).as("%s:%d: %s", file, i + 1, lines.get(i)).isEmpty();
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(20);
    }

    @Test
    void aRecordWithAFieldTheSchemaDoesNotNameOrAWrongTypeFails() throws Exception {
        Map<String, Object> schema = object(read(Files.readString(SCHEMA)));
        List<String> problems = new ArrayList<>();
        check(schema, read("{\"ts\":\"2026-11-30T00:00:00.000Z\",\"event\":\"request\",\"port\":\"443\",\"new_field\":1,"
                + "\"seq\":0,\"hash\":\"short\"}"), "", problems);
        assertThat(problems).containsExactlyInAnyOrder("port: a string (expected: integer)",
                "new_field: not in the schema", "hash: 'short' does not match ^[A-Za-z0-9_-]{43}$");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object o) {
        return (Map<String, Object>) o;
    }

    /** The keywords the schema uses, applied to one value; problems are added as "path: what". */
    @SuppressWarnings("unchecked")
    private static void check(Map<String, Object> s, Object value, String at, List<String> problems) {
        if (s.containsKey("enum") && !((List<Object>) s.get("enum")).contains(value)) {
            problems.add(at + ": " + value + " is not one of " + s.get("enum"));
        }
        String type = (String) s.get("type");
        if (type != null) {
            String actual = value instanceof Map ? "object" : value instanceof List ? "array"
                    : value instanceof Long ? "integer" : value instanceof String ? "string" : "other";
            if (!type.equals(actual)) {
                problems.add(at + ": a " + actual + " (expected: " + type + ")");
                return;
            }
        }
        if (s.containsKey("pattern") && value instanceof String str
                && !Pattern.compile((String) s.get("pattern")).matcher(str).find()) {
            problems.add(at + ": '" + str + "' does not match " + s.get("pattern"));
        }
        if (value instanceof Long n) {
            if (s.containsKey("minimum") && n < (Long) s.get("minimum")) {
                problems.add(at + ": " + n + " is below " + s.get("minimum"));
            }
            if (s.containsKey("maximum") && n > (Long) s.get("maximum")) {
                problems.add(at + ": " + n + " is above " + s.get("maximum"));
            }
        }
        if (value instanceof List<?> items && s.containsKey("items")) {
            for (int i = 0; i < items.size(); i++) {
                check(object(s.get("items")), items.get(i), at + "[" + i + "]", problems);
            }
        }
        if (value instanceof Map<?, ?> fields) {
            Map<String, Object> properties = object(s.getOrDefault("properties", Map.of()));
            for (Object required : (List<Object>) s.getOrDefault("required", List.of())) {
                if (!fields.containsKey(required)) {
                    problems.add(required + ": missing");
                }
            }
            fields.forEach((name, v) -> {
                if (properties.containsKey(name)) {
                    check(object(properties.get(name)), v, at.isEmpty() ? (String) name : at + "." + name, problems);
                } else if (Boolean.FALSE.equals(s.get("additionalProperties"))) {
                    problems.add(name + ": not in the schema");
                }
            });
        }
    }

    private static Object read(String json) throws IOException {
        try (JsonParser p = JSON.createParser(json)) {
            p.nextToken();
            return value(p);
        }
    }

    private static Object value(JsonParser p) throws IOException {
        return switch (p.currentToken()) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    m.put(name, value(p));
                }
                yield m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    l.add(value(p));
                }
                yield l;
            }
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> p.getLongValue();
            case VALUE_TRUE, VALUE_FALSE -> p.getBooleanValue();
            default -> null;
        };
    }
}
