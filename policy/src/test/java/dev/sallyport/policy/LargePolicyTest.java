package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The indexed engine must decide exactly as a plain first-match scan over all rules does. */
class LargePolicyTest {

    @Test
    void indexedMatchingAgreesWithALinearScanOnTenThousandRules() {
        Random random = new Random(42);
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            String base = "h" + random.nextInt(3000) + ".d" + random.nextInt(50) + ".example";
            HostPattern host = HostPattern.parse(switch (i % 4) {
                case 0, 1 -> base;
                case 2 -> "*.d" + random.nextInt(50) + ".example";
                default -> "*." + base;
            });
            Action action = random.nextInt(5) == 0 ? Action.DENY : Action.ALLOW;
            Set<String> methods = random.nextBoolean() ? Set.of() : Set.of("GET");
            List<PathPattern> paths = random.nextInt(3) == 0 ? List.of(PathPattern.parse("/p" + random.nextInt(4) + "/**"))
                    : List.of();
            rules.add(new Rule("r" + i, i + 1, action, List.of(host), List.of(), Set.of(443, 80 + (i % 3)),
                    methods, paths, TlsMode.INTERCEPT, Set.of()));
        }
        Policy p = new Policy(ProxySettings.DEFAULTS, CaSettings.STATE_DIRECTORY, AuditSettings.STDOUT, Mode.ENFORCE,
                UpstreamSettings.SYSTEM, NetworkSettings.DEFAULTS, rules, List.of(), null);
        PolicyEngine engine = PolicyEngine.compile(p);
        for (int q = 0; q < 5_000; q++) {
            String host = (random.nextBoolean() ? "x" + random.nextInt(3) + "." : "") + "h" + random.nextInt(3000)
                    + ".d" + random.nextInt(50) + ".example";
            int port = random.nextInt(4) == 0 ? 81 : 443;
            String method = random.nextBoolean() ? "GET" : "POST";
            String path = "/p" + random.nextInt(5) + "/x";
            Rule expected = null;
            for (Rule r : rules) {
                boolean hostOk = r.hosts().stream().anyMatch(h -> h.matches(host));
                boolean rest = r.ports().contains(port) && (r.methods().isEmpty() || r.methods().contains(method))
                        && (r.paths().isEmpty() || r.paths().stream().anyMatch(pp -> pp.matches(path)));
                if (hostOk && rest) {
                    expected = r;
                    break;
                }
            }
            Decision d = engine.onRequest(host, port, method, path, null);
            assertThat(d.rule()).as("%s %s:%d%s", method, host, port, path)
                    .isEqualTo(expected == null ? null : expected.name());
            if (expected != null) {
                assertThat(d.verdict()).isEqualTo(expected.action() == Action.ALLOW ? Verdict.ALLOW : Verdict.DENY);
            }
        }
    }
}
