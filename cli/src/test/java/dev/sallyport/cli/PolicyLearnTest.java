package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.Verdict;
import dev.sallyport.proxy.audit.AuditKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Learn, then replay: real traffic through a proxy in {@code mode: audit} (no rules, so every decision is
 * {@code would_deny}), the policy {@code policy suggest} writes from its log, and {@code policy replay} of that
 * policy and of a stricter one against the same log.
 */
class PolicyLearnTest {

    @TempDir
    Path dir;

    @Test
    void theSuggestedPolicyAllowsExactlyTheTrafficOfAnAuditModeRunAndReplayShowsWhatAStricterOneBreaks()
            throws Exception {
        RealAuditLog.Written w = RealAuditLog.write(dir, AuditKey.generate(), "mode: audit\n", List.of(List.of(
                List.of("/api/v1/users/1", "/api/v1/users/2", "/api/v1/users/3", "/health"),
                List.of("/api/v1/orders/7"))));
        String log = w.log().toString();
        int port = w.upstreamPort();

        CliRun suggest = CliRun.of("policy", "suggest", log);
        assertThat(suggest.exit()).as(suggest.err()).isZero();
        assertThat(suggest.out())
                .startsWith("# A policy suggested by 'sallyport policy suggest' from " + log)
                .contains("mode: enforce")
                .contains("    cidrs: [\"127.0.0.1/32\"]\n    ports: [" + port + "]\n")
                .contains("    methods: [GET]\n    paths: [\"/api/v1/orders/7\", \"/api/v1/users/**\", \"/health\"]\n")
                .doesNotContain("\"/**\"");
        Path suggested = Files.writeString(dir.resolve("suggested.yaml"), suggest.out()
                + "network:\n  allow_private: [\"127.0.0.1:" + port + "\"]\n");

        CliRun check = CliRun.of("policy", "check", suggested.toString());
        assertThat(check.exit()).as(check.err()).isZero();

        CliRun replay = CliRun.of("policy", "replay", suggested.toString(), log);
        assertThat(replay.exit()).as(replay.out() + replay.err()).isZero();
        assertThat(replay.out()).contains("against 7 recorded decisions: 0 would change, 7 unchanged")
                .contains("newly denied: 0\nnewly allowed: 0\ndifferent rule: 0\n")
                .contains("would_deny (audit mode) now allowed by a rule: 7");

        PolicyEngine engine = PolicyEngine.compile(PolicyLoader.load(suggested));
        assertThat(engine.onRequest("127.0.0.1", port, "GET", "/api/v1/users/1", null).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(engine.onRequest("127.0.0.1", port, "DELETE", "/api/v1/users/1", null).verdict())
                .as("a method the log never saw").isEqualTo(Verdict.DENY);
        assertThat(engine.onRequest("127.0.0.1", port, "GET", "/admin", null).verdict())
                .as("a path the log never saw").isEqualTo(Verdict.DENY);
        assertThat(engine.onConnect("127.0.0.2", port, null).verdict()).as("a host the log never saw")
                .isEqualTo(Verdict.DENY);

        Path stricter = Files.writeString(dir.resolve("stricter.yaml"), """
                rules:
                  - name: users-only
                    cidrs: [127.0.0.1/32]
                    ports: [%d]
                    methods: [GET]
                    paths: ["/api/v1/users/**"]
                """.formatted(port));
        CliRun broken = CliRun.of("policy", "replay", stricter.toString(), log);
        assertThat(broken.exit()).as(broken.out() + broken.err()).isEqualTo(1);
        assertThat(broken.out()).contains("against 7 recorded decisions: 2 would change, 5 unchanged")
                .contains("newly denied: 2\n")
                .contains("       1  GET 127.0.0.1:" + port + " /health  (would_deny: no_matching_rule -> deny:"
                        + " path_not_allowed)")
                .contains("       1  GET 127.0.0.1:" + port + " /api/v1/orders/7  (would_deny");
    }
}
