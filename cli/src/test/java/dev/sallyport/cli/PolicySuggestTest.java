package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code policy suggest} makes of the shapes a log can show, and {@code policy replay}'s other groups. */
class PolicySuggestTest {

    private static final String LOG = """
            {"ts":"2026-11-30T00:00:00.000Z","event":"connect","host":"a.cdn.example.com","port":443,"decision":"would_deny","reason":"no_matching_rule","tls":"intercepted"}
            {"ts":"2026-11-30T00:00:01.000Z","event":"request","host":"a.cdn.example.com","port":443,"method":"GET","path":"/lib.js","status":200,"decision":"would_deny","reason":"no_matching_rule"}
            {"ts":"2026-11-30T00:00:02.000Z","event":"request","host":"b.cdn.example.com","port":443,"method":"GET","path":"/lib.js","status":200,"decision":"would_deny","reason":"no_matching_rule"}
            {"ts":"2026-11-30T00:00:03.000Z","event":"request","host":"c.cdn.example.com","port":443,"method":"GET","path":"/lib.js","status":200,"decision":"would_deny","reason":"no_matching_rule"}
            {"ts":"2026-11-30T00:00:04.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/v1/repos/x/issues","status":200,"decision":"would_deny","reason":"no_matching_rule","secrets":["GH_TOKEN"]}
            {"ts":"2026-11-30T00:00:05.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/v1/repos/y/issues","status":200,"decision":"would_deny","reason":"no_matching_rule","secrets":["GH_TOKEN"]}
            {"ts":"2026-11-30T00:00:06.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/v1/repos/z/issues","status":200,"decision":"would_deny","reason":"no_matching_rule"}
            {"ts":"2026-11-30T00:00:07.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/v1/repos/secret/admin","status":403,"decision":"deny","rule":"no-admin","reason":"denied_by_rule"}
            {"ts":"2026-11-30T00:00:08.000Z","event":"request","host":"api.example.com","port":443,"method":"POST","path":"/v1/graphql","status":200,"decision":"would_deny","reason":"no_matching_rule"}
            {"ts":"2026-11-30T00:00:09.000Z","event":"connect","host":"pinned.example.com","port":8443,"decision":"would_deny","reason":"no_matching_rule","tls":"passthrough"}
            {"ts":"2026-11-30T00:00:10.000Z","event":"connect","host":"evil.example.net","port":443,"decision":"deny","reason":"no_matching_rule","status":403}
            {"ts":"2026-11-30T00:00:11.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/v1/x","status":403,"decision":"deny","reason":"secret_cleartext","secrets":["GH_TOKEN"]}
            """;

    @TempDir
    Path dir;

    @Test
    void groupsHostsCollapsesPathsSuggestsWildcardsNamesSecretsAndLeavesDenialsDenied() throws Exception {
        Path log = Files.writeString(dir.resolve("audit.jsonl"), LOG);
        CliRun suggest = CliRun.of("policy", "suggest", "--out", dir.resolve("p.yaml").toString(), log.toString());
        assertThat(suggest.exit()).as(suggest.err()).isZero();
        String policy = Files.readString(dir.resolve("p.yaml"));
        assertThat(policy)
                .contains("    hosts: [\"a.cdn.example.com\", \"b.cdn.example.com\", \"c.cdn.example.com\"]\n"
                        + "    # suggestion, not applied: \"*.cdn.example.com\" would cover these 3 hosts (and any"
                        + " other under it)\n    ports: [443]\n    methods: [GET]\n    paths: [\"/lib.js\"]\n")
                .contains("    hosts: [\"api.example.com\"]\n    ports: [443]\n    methods: [GET]\n"
                        + "    paths: [\"/v1/repos/x/issues\", \"/v1/repos/y/issues\", \"/v1/repos/z/issues\"]\n")
                .contains("    methods: [POST]\n    paths: [\"/v1/graphql\"]\n")
                .contains("    hosts: [\"pinned.example.com\"]\n    ports: [8443]\n    tls: passthrough")
                .contains("#   GH_TOKEN on api.example.com:443")
                .doesNotContain("evil.example.net", "/v1/repos/**", "/v1/repos/secret/admin", "hosts: [\"*.");
        CliRun check = CliRun.of("policy", "check", dir.resolve("p.yaml").toString());
        assertThat(check.exit()).as(check.err()).isZero();

        CliRun replay = CliRun.of("policy", "replay", dir.resolve("p.yaml").toString(), log.toString());
        assertThat(replay.exit()).as(replay.out()).isZero();
        assertThat(replay.out()).contains("against 11 recorded decisions: 0 would change, 11 unchanged")
                .contains("not replayed (refused outside the rules): {secret_cleartext=1}");
    }

    @Test
    void replayGroupsNewlyAllowedAndDifferentRule() throws Exception {
        Path log = Files.writeString(dir.resolve("audit.jsonl"), """
                {"ts":"2026-11-30T00:00:00.000Z","event":"connect","host":"evil.example.net","port":443,"decision":"deny","reason":"no_matching_rule","status":403}
                {"ts":"2026-11-30T00:00:01.000Z","event":"connect","host":"evil.example.net","port":443,"decision":"deny","reason":"no_matching_rule","status":403}
                {"ts":"2026-11-30T00:00:02.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/x","status":200,"decision":"allow","rule":"old-api","reason":"allowed_by_rule"}
                """);
        Path policy = Files.writeString(dir.resolve("p.yaml"), """
                rules:
                  - name: api
                    hosts: [api.example.com]
                  - name: everything
                    hosts: ["*.example.net"]
                """);
        CliRun replay = CliRun.of("policy", "replay", policy.toString(), log.toString());
        assertThat(replay.exit()).isEqualTo(1);
        assertThat(replay.out()).contains("against 3 recorded decisions: 3 would change, 0 unchanged")
                .contains("newly allowed: 2\n       2  CONNECT evil.example.net:443  (deny: no_matching_rule -> allow by"
                        + " everything: allowed_by_rule)")
                .contains("different rule: 1\n       1  GET api.example.com:443 /x  (allow by old-api: allowed_by_rule"
                        + " -> allow by api: allowed_by_rule)");
    }
}
