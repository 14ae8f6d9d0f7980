package dev.sallyport.benchmarks;

import dev.sallyport.policy.Action;
import dev.sallyport.policy.AuditSettings;
import dev.sallyport.policy.CaSettings;
import dev.sallyport.policy.Decision;
import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.Mode;
import dev.sallyport.policy.NetworkSettings;
import dev.sallyport.policy.PathPattern;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.ProxySettings;
import dev.sallyport.policy.Rule;
import dev.sallyport.policy.TlsMode;
import dev.sallyport.policy.UpstreamSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one policy decision against a large policy: 10,000 rules, of which 6,000 name exact hosts,
 * 2,500 are {@code *.} wildcards and 1,500 restrict methods and paths (with {@code *} and {@code **}
 * globs). It models a shared proxy serving many sandboxes whose combined allow lists are long: every
 * CONNECT and every intercepted request runs one such decision on a Netty event loop, so it must stay
 * in the low microseconds whatever the rule count. Cases: a hit on the first rule, a hit on a rule near
 * the end, a deep wildcard hit, a path rule hit, a miss (the deny path, which also explains itself), and
 * a CONNECT decision.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl benchmarks -am package -DskipTests -Dmaven.compiler.proc=full} (JDK 23+
 * runs the JMH annotation processor only when asked) then
 * {@code java -jar benchmarks/target/benchmarks.jar PolicyMatch -f 1 -wi 2 -i 3 -w 1s -r 1s}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(org.openjdk.jmh.annotations.Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class PolicyMatchBenchmark {

    static final int RULES = 10_000;

    private PolicyEngine engine;
    private PolicyEngine small;

    @Setup
    public void setup() {
        List<Rule> rules = new ArrayList<>(RULES);
        for (int i = 0; i < RULES; i++) {
            int kind = i % 20;
            if (kind < 12) {
                rules.add(rule(i, "svc" + i + ".team" + (i % 97) + ".example.com", Set.of(), List.of()));
            } else if (kind < 17) {
                rules.add(rule(i, "*.zone" + i + ".example.net", Set.of(), List.of()));
            } else {
                rules.add(rule(i, "api" + i + ".example.org", Set.of("GET", "POST"),
                        List.of(PathPattern.parse("/v1/*/items/**"), PathPattern.parse("/repos/acme" + i + "/**"))));
            }
        }
        engine = compile(rules);
        small = compile(rules.subList(RULES - 10, RULES));
        check(requestFirst(), "r0");
        check(requestLast(), "r9980");
        check(requestWildcard(), "r9992");
        check(requestPath(), "r9999");
        check(requestMiss(), null);
    }

    private static PolicyEngine compile(List<Rule> rules) {
        return PolicyEngine.compile(new Policy(ProxySettings.DEFAULTS, CaSettings.STATE_DIRECTORY,
                AuditSettings.STDOUT, Mode.ENFORCE, UpstreamSettings.SYSTEM, NetworkSettings.DEFAULTS, rules,
                List.of(), null));
    }

    private static Rule rule(int i, String host, Set<String> methods, List<PathPattern> paths) {
        return new Rule("r" + i, i + 1, Action.ALLOW, List.of(HostPattern.parse(host)), List.of(), Set.of(443),
                methods, paths, TlsMode.INTERCEPT, Set.of());
    }

    private static void check(Decision d, String rule) {
        if (rule == null ? d.rule() != null : !rule.equals(d.rule())) {
            throw new IllegalStateException("benchmark setup: expected rule " + rule + ", got " + d);
        }
    }

    @Benchmark
    public Decision requestFirst() {
        return engine.onRequest("svc0.team0.example.com", 443, "GET", "/index.html", null);
    }

    @Benchmark
    public Decision requestLast() {
        return engine.onRequest("svc9980.team86.example.com", 443, "GET", "/a/b/c?q=1", null);
    }

    @Benchmark
    public Decision requestWildcard() {
        return engine.onRequest("a.b.c.zone9992.example.net", 443, "GET", "/", null);
    }

    @Benchmark
    public Decision requestPath() {
        return engine.onRequest("api9999.example.org", 443, "POST", "/v1/x/items/7/parts/%61?z=1", null);
    }

    @Benchmark
    public Decision requestMiss() {
        return engine.onRequest("unknown.sub.example.com", 443, "GET", "/x", null);
    }

    /** The same request as {@link #requestPath()} against a 10-rule policy: the cost of size itself. */
    @Benchmark
    public Decision requestPathSmallPolicy() {
        return small.onRequest("api9999.example.org", 443, "POST", "/v1/x/items/7/parts/%61?z=1", null);
    }

    @Benchmark
    public Decision connectLast() {
        return engine.onConnect("api9999.example.org", 443, null);
    }
}
