package dev.sallyport.benchmarks.soak;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

/**
 * Whether the proxy stayed steady. The first quarter of the run is warm-up (JIT, pools, caches filling); the rest
 * is cut in two halves, and a measure "grows without bound" when the highest value of the second half exceeds the
 * highest of the first by more than its allowance (a leak keeps climbing, so its late peak passes the early one;
 * a bounded cache or pool stops). Any leak report, failed operation, real value seen by the client, or denied
 * path reaching the upstream fails the run too.
 */
final class Verdict {

    static final String HEADER = String.format("%8s %9s %9s %9s %9s %9s %6s %8s %6s",
            "second", "ops", "rss_MiB", "heap_MiB", "direct", "netty", "fds", "threads", "leaks");

    private record Measure(String name, ToLongFunction<Soak.Sample> value, long fixed, double share) {}

    private static final long MIB = 1 << 20;

    private static final List<Measure> MEASURES = List.of(
            new Measure("rss", Soak.Sample::rss, 32 * MIB, 0.10),
            new Measure("heap after GC", Soak.Sample::heap, 8 * MIB, 0.15),
            new Measure("direct buffers", Soak.Sample::direct, 16 * MIB, 0.15),
            new Measure("netty direct memory", Soak.Sample::netty, 16 * MIB, 0.15),
            new Measure("open fds", Soak.Sample::fds, 32, 0),
            new Measure("threads", Soak.Sample::threads, 8, 0));

    private Verdict() {}

    static String row(Soak.Sample s) {
        return String.format("%8d %9d %9.1f %9.1f %9.1f %9.1f %6d %8d %6d", s.second(), s.ops(), mib(s.rss()),
                mib(s.heap()), mib(s.direct()), mib(s.netty()), s.fds(), s.threads(), s.leaks());
    }

    static String csv(Soak.Sample s) {
        return s.second() + "," + s.ops() + "," + s.rss() + "," + s.heap() + "," + s.direct() + "," + s.netty() + ","
                + s.fds() + "," + s.threads() + "," + s.leaks() + "\n";
    }

    static boolean print(List<Soak.Sample> samples, Map<SoakLoad.Op, LongAdder> done,
                         Map<String, LongAdder> failures, List<String> leakLines, SoakUpstream upstream,
                         PrintStream out) {
        boolean steady = true;
        StringBuilder ops = new StringBuilder();
        done.forEach((op, n) -> ops.append(' ').append(op.name().toLowerCase(java.util.Locale.ROOT)).append('=')
                .append(n.sum()));
        out.println("soak: operations done:" + ops);
        int from = Math.max(1, samples.size() / 4);
        List<Soak.Sample> measured = samples.subList(Math.min(from, samples.size()), samples.size());
        if (measured.size() < 4) {
            out.println("soak: FAIL: " + samples.size() + " samples (expected: at least 6; sample more often)");
            return false;
        }
        List<Soak.Sample> early = measured.subList(0, measured.size() / 2);
        List<Soak.Sample> late = measured.subList(measured.size() / 2, measured.size());
        for (Measure m : MEASURES) {
            long a = early.stream().mapToLong(m.value()).max().orElseThrow();
            long b = late.stream().mapToLong(m.value()).max().orElseThrow();
            long allowed = m.fixed() + (long) (a * m.share());
            boolean ok = b - a <= allowed;
            steady &= ok;
            out.printf("soak: %s %s: early peak %s, late peak %s (allowed growth %s)%n", ok ? "ok  " : "FAIL",
                    m.name(), show(m, a), show(m, b), show(m, allowed));
        }
        long leaks = samples.getLast().leaks();
        if (leaks > 0 || !leakLines.isEmpty()) {
            steady = false;
            out.println("soak: FAIL: " + leaks + " Netty leak reports, first: " + leakLines);
        }
        long failed = failures.values().stream().mapToLong(LongAdder::sum).sum();
        if (failed > 0) {
            steady = false;
            out.println("soak: FAIL: " + failed + " operations failed:");
            failures.forEach((what, n) -> out.println("  " + n.sum() + " x " + what));
        }
        if (upstream.breaches.get() > 0) {
            steady = false;
            out.println("soak: FAIL: " + upstream.breaches.get() + " denied requests reached the upstream");
        }
        if (done.get(SoakLoad.Op.SECRET).sum() > 0 && upstream.secretsSeen.get() == 0) {
            steady = false;
            out.println("soak: FAIL: no secret was injected toward the upstream");
        }
        out.println(steady ? "soak: steady" : "soak: NOT steady");
        return steady;
    }

    private static String show(Measure m, long v) {
        return m.fixed() >= MIB ? String.format("%.1f MiB", mib(v)) : String.valueOf(v);
    }

    private static double mib(long bytes) {
        return bytes / (double) MIB;
    }
}
