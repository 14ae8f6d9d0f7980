package dev.sallyport.proxy.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class JsonLineTest {

    @Test
    void escapesQuotesBackslashesAndControlCharacters() {
        String line = new JsonLine().field("path", "/a\"b\\c\nd\re\tf\bg\fh\u0000i\u001fj\u007fk").end();

        assertThat(line).isEqualTo(
                "{\"path\":\"/a\\\"b\\\\c\\nd\\re\\tf\\bg\\fh\\u0000i\\u001fj\\u007fk\"}\n");
    }

    @Test
    void nonAsciiIsEscapedSoLineSeparatorsCannotSplitARecord() {
        String line = new JsonLine().field("host", "b\u00fccher\u2028x\u2029y\u0085z").end();

        assertThat(line).isEqualTo("{\"host\":\"b\\u00fccher\\u2028x\\u2029y\\u0085z\"}\n");
        assertThat(line.chars()).allMatch(c -> c < 0x7f);
    }

    @Test
    void surrogatePairsAreKeptAndLoneSurrogatesReplaced() {
        String line = new JsonLine().field("p", "\ud83d\ude00|\ud800|\udc00|x\ud83d").end();

        assertThat(line).isEqualTo("{\"p\":\"\\ud83d\\ude00|\\ufffd|\\ufffd|x\\ufffd\"}\n");
    }

    @Test
    void exactlyOneLineFeedWhateverTheInput() {
        StringBuilder hostile = new StringBuilder();
        for (char c = 0; c < 0x3000; c++) {
            hostile.append(c);
        }
        hostile.append('\ud800').append("\r\n").append('\udfff');
        String line = new JsonLine().field("path", hostile.toString()).field("secrets", List.of("A\nB")).end();

        assertThat(line.indexOf('\n')).isEqualTo(line.length() - 1);
        assertThat(line).doesNotContain("\r").startsWith("{\"path\":\"").endsWith("\"secrets\":[\"A\\nB\"]}\n");
    }

    @Test
    void nullFieldsAreAbsentAndNumbersAreBare() {
        String line = new JsonLine().field("a", (String) null).field("n", 42).field("l", (List<String>) null)
                .field("b", 7L).end();

        assertThat(line).isEqualTo("{\"n\":42,\"b\":7}\n");
    }

    @Test
    void overlongValuesAreCut() {
        String line = new JsonLine().field("path", "/" + "a".repeat(100_000)).end();

        assertThat(line.length()).isLessThan(JsonLine.MAX_VALUE_CHARS + 20);
    }
}
