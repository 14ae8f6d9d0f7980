package dev.sallyport.proxy.audit;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fuzz target: every line the audit writer's {@link JsonLine} builds, from any names, strings (lone surrogates,
 * line separators, controls, overlong values), numbers and lists, is one line of pure ASCII that a JSON parser
 * not ours (Jackson) reads back as one object holding exactly the fields written, each value as written (lone
 * surrogates as U+FFFD, cut at {@link JsonLine#MAX_VALUE_CHARS}). Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/audit/AuditJsonFuzzTestInputs/}.
 */
class AuditJsonFuzzTest {

    private static final JsonFactory JSON = new JsonFactory();

    @FuzzTest
    void everyRecordParsesBack(FuzzedDataProvider data) throws IOException {
        JsonLine line = new JsonLine();
        Map<String, Object> expected = new LinkedHashMap<>();
        int fields = data.consumeInt(0, 12);
        for (int i = 0; i < fields; i++) {
            String name = "f" + i + "_" + data.consumeString(16);     // distinct names, as the writer is given
            switch (data.consumeInt(0, 3)) {
                case 0 -> {
                    String v = data.consumeBoolean() ? null : data.consumeString(10_000);
                    line.field(name, v);
                    if (v != null) {
                        expected.put(name, written(v));
                    }
                }
                case 1 -> {
                    long v = data.consumeLong();
                    line.field(name, v);
                    expected.put(name, v);
                }
                case 2 -> {
                    List<String> vs = new ArrayList<>();
                    List<Object> want = new ArrayList<>();
                    for (int n = data.consumeInt(0, 4); n > 0; n--) {
                        String v = data.consumeBoolean() ? null : data.consumeString(64);
                        vs.add(v);
                        want.add(v == null ? "<null>" : written(v));
                    }
                    line.field(name, vs);
                    expected.put(name, want);
                }
                default -> line.field(name, (String) null);
            }
        }
        String text = line.end();
        assertThat(text.indexOf('\n')).as("one line").isEqualTo(text.length() - 1);
        assertThat(text.chars().allMatch(c -> (c >= 0x20 && c < 0x7f) || c == '\n')).as("pure printable ASCII").isTrue();
        Map<String, Object> parsed = new LinkedHashMap<>();
        try (JsonParser p = JSON.createParser(text)) {
            assertThat(p.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                Object v = switch (value) {
                    case VALUE_STRING -> p.getText();
                    case VALUE_NUMBER_INT -> p.getLongValue();
                    case START_ARRAY -> {
                        List<Object> items = new ArrayList<>();
                        for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                            items.add(e == JsonToken.VALUE_NULL ? "<null>" : p.getText());
                        }
                        yield items;
                    }
                    default -> throw new AssertionError("unexpected " + value + " in " + text);
                };
                assertThat(parsed.put(written(name), v)).as("field %s once", name).isNull();
            }
            assertThat(p.nextToken()).as("nothing after the object").isNull();
        }
        Map<String, Object> want = new LinkedHashMap<>();
        expected.forEach((k, v) -> want.put(written(k), v));
        assertThat(parsed).isEqualTo(want);
    }

    /** What a string reads back as: cut at the limit, lone surrogates replaced. */
    private static String written(String s) {
        String cut = s.length() > JsonLine.MAX_VALUE_CHARS ? s.substring(0, JsonLine.MAX_VALUE_CHARS) : s;
        StringBuilder sb = new StringBuilder(cut.length());
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < cut.length() && Character.isLowSurrogate(cut.charAt(i + 1))) {
                sb.append(c).append(cut.charAt(++i));
            } else {
                sb.append(Character.isSurrogate(c) ? '\ufffd' : c);
            }
        }
        return sb.toString();
    }
}
