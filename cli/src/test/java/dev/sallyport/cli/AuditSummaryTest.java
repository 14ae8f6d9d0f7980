package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditSummaryTest {

    @TempDir
    Path dir;

    @Test
    void summarizesHostsDenialsSecretsAndRules() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"connect","host":"api.example.com","port":443,"decision":"allow","rule":"api","reason":"allowed_by_rule","tls":"intercepted"}
                {"ts":"2026-11-30T00:00:01.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/x","status":200,"decision":"allow","rule":"api","secrets":["GITHUB_TOKEN"],"bytes_up":10,"bytes_down":20}
                {"ts":"2026-11-30T00:00:02.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/y","status":200,"decision":"allow","rule":"api","secrets":["GITHUB_TOKEN"]}
                {"ts":"2026-11-30T00:00:03.000Z","event":"connect","host":"evil.example.net","port":443,"decision":"deny","reason":"no_matching_rule","status":403}
                {"ts":"2026-11-30T00:00:04.000Z","event":"request","host":"api.example.com","port":443,"method":"POST","path":"/z","decision":"deny","rule":"no-writes","reason":"denied_by_rule","status":403,"future_field":{"a":[1,2]}}
                {"ts":"2026-11-30T00:00:05.000Z","event":"reload","result":"success"}
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("6 records, 2026-11-30T00:00:00.000Z .. 2026-11-30T00:00:05.000Z")
                .contains("     2  api.example.com:443")
                .contains("     1  evil.example.net:443  (no_matching_rule)")
                .contains("     1  api.example.com:443  (denied_by_rule)")
                .containsPattern("GITHUB_TOKEN +api.example.com:443 2")
                .containsPattern("api +allow 3")
                .containsPattern("no-writes +deny 1")
                .contains("policy reloads: 1");
    }

    @Test
    void namesEachBadLineAndExits2() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"request","host":"a.example.com","port":443,"decision":"allow","rule":"r"}
                not json
                {"ts":"2026-11-30T00:00:01.000Z","event":"request"} trailing
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains(log + ":2: ").contains(log + ":3: ").hasLineCount(2);
        assertThat(run.out()).contains("     1  a.example.com:443");
    }

    @Test
    void missingFileIsARuntimeFailure() {
        CliRun run = CliRun.of("audit", "summary", dir.resolve("none.jsonl").toString());
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err()).contains("no such file").hasLineCount(1);
    }
}
