package dev.sallyport.benchmarks.soak;

import dev.sallyport.testing.TestPki;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The soak: a mixed load through a proxy in a JVM of its own ({@link SoakProxy}) at a capped rate for a bounded
 * time, sampling the proxy process (RSS, heap after a full collection, direct memory, open file descriptors,
 * threads, Netty leak reports at the paranoid level) and failing when one of them keeps growing or anything went
 * wrong. Run by {@code benchmarks/soak/run.sh}, which says the knobs; {@code Soak WORKDIR SECONDS RATE SAMPLE_SECONDS
 * HOSTS} here. Exit 0 when steady, 1 otherwise; a table of samples and a verdict on standard output, the samples
 * also in {@code WORKDIR/samples.csv}.
 */
public final class Soak {

    private static final String PLACEHOLDER = "SALLYPORT_SOAK_PLACEHOLDER_0123456789";
    private static final int IN_FLIGHT = 16;

    private Soak() {}

    record Sample(long second, long ops, long rss, long heap, long direct, long netty, long fds, long threads,
                  long leaks) {}

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        long seconds = Long.parseLong(args[1]);
        int rate = Integer.parseInt(args[2]);
        long sampleEvery = Long.parseLong(args[3]);
        int hosts = Integer.parseInt(args[4]);
        System.exit(run(work, seconds, rate, sampleEvery, hosts, System.out) ? 0 : 1);
    }

    static boolean run(Path work, long seconds, int rate, long sampleEvery, int hosts, PrintStream out)
            throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued cert = pki.issue("*.soak.test", "api.soak.test");
        String secret = "soak-real-value-" + Long.toHexString(System.nanoTime());
        Files.writeString(work.resolve("secret.txt"), secret);
        Path root = pki.rootPem(work);
        Files.createDirectories(work.resolve("audit"));    // not beside the policy: its folder is watched
        try (SoakUpstream upstream = new SoakUpstream(cert.key(), cert.chain(), secret)) {
            Path policy = work.resolve("soak-policy.yaml");
            Files.writeString(policy, policy(work, root, upstream.port()));
            Process proxy = startProxy(work, policy);
            AtomicLong leaks = new AtomicLong();
            List<String> leakLines = new ArrayList<>();
            Thread stderr = Thread.ofPlatform().daemon().start(() -> readStderr(proxy, work, leaks, leakLines));
            try {
                int port = Integer.parseInt(awaitFile(work.resolve("proxy.port"), proxy).strip());
                SoakLoad load = new SoakLoad(port, upstream.port(), trusting(work.resolve("ca.pem")), PLACEHOLDER,
                        secret, hosts);
                Map<SoakLoad.Op, LongAdder> done = new EnumMap<>(SoakLoad.Op.class);
                Map<String, LongAdder> failures = new ConcurrentHashMap<>();
                for (SoakLoad.Op op : SoakLoad.Op.values()) {
                    done.put(op, new LongAdder());
                }
                List<Sample> samples = drive(load, proxy, seconds, rate, sampleEvery, done, failures, leaks, work, out);
                boolean steady = Verdict.print(samples, done, failures, leakLines, upstream, out);
                return steady;
            } finally {
                proxy.getOutputStream().close();
                if (!proxy.waitFor(20, TimeUnit.SECONDS)) {
                    proxy.destroyForcibly();
                }
                stderr.join(5_000);
            }
        }
    }

    private static List<Sample> drive(SoakLoad load, Process proxy, long seconds, int rate, long sampleEvery,
                                      Map<SoakLoad.Op, LongAdder> done, Map<String, LongAdder> failures,
                                      AtomicLong leaks, Path work, PrintStream out) throws Exception {
        SoakLoad.Op[] mix = mix();
        Semaphore slots = new Semaphore(IN_FLIGHT);
        LongAdder skipped = new LongAdder();
        List<Sample> samples = new ArrayList<>();
        Writer csv = Files.newBufferedWriter(work.resolve("samples.csv"), StandardCharsets.UTF_8);
        csv.write("second,ops,rss,heap_after_gc,direct,netty_direct,fds,threads,leaks\n");
        BufferedReader replies = new BufferedReader(new InputStreamReader(proxy.getInputStream(), StandardCharsets.UTF_8));
        Writer commands = new java.io.OutputStreamWriter(proxy.getOutputStream(), StandardCharsets.UTF_8);
        out.printf("soak: %d s at %d operations/s, a sample every %d s, %d host names%n", seconds, rate, sampleEvery,
                load.hostCount());
        out.println(Verdict.HEADER);
        long start = System.nanoTime();
        long total = seconds * rate;
        long nextSample = 0;
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (long n = 0; n <= total; n++) {
                long due = start + TimeUnit.SECONDS.toNanos(n) / rate;
                long second = (System.nanoTime() - start) / 1_000_000_000L;
                if (second >= nextSample || n == total) {
                    Sample s = sample(proxy, commands, replies, second, done, leaks);
                    samples.add(s);
                    out.println(Verdict.row(s));
                    csv.write(Verdict.csv(s));
                    csv.flush();
                    nextSample += sampleEvery;
                }
                if (n == total) {
                    break;
                }
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);    // the rate cap
                }
                if (!slots.tryAcquire()) {
                    skipped.increment();                  // behind: never more than IN_FLIGHT at once
                    continue;
                }
                SoakLoad.Op op = mix[(int) (n % mix.length)];
                pool.execute(() -> {
                    try {
                        load.run(op);
                        done.get(op).increment();
                    } catch (Exception | AssertionError e) {
                        failures.computeIfAbsent(op + ": " + e, k -> new LongAdder()).increment();
                    } finally {
                        slots.release();
                    }
                });
            }
        }
        csv.close();
        if (skipped.sum() > 0) {
            out.printf("soak: %d operations not started (the proxy or this machine fell behind: %d in flight)%n",
                    skipped.sum(), IN_FLIGHT);
        }
        return samples;
    }

    /** Each round: mostly small keep-alive requests, then one of each other kind. */
    private static SoakLoad.Op[] mix() {
        List<SoakLoad.Op> ops = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ops.add(SoakLoad.Op.KEEPALIVE_H1);
            ops.add(SoakLoad.Op.KEEPALIVE_H2);
        }
        for (SoakLoad.Op op : SoakLoad.Op.values()) {
            if (op != SoakLoad.Op.KEEPALIVE_H1 && op != SoakLoad.Op.KEEPALIVE_H2) {
                ops.add(op);
            }
        }
        return ops.toArray(SoakLoad.Op[]::new);
    }

    private static Sample sample(Process proxy, Writer commands, BufferedReader replies, long second,
                                 Map<SoakLoad.Op, LongAdder> done, AtomicLong leaks) throws IOException {
        commands.write("sample\n");
        commands.flush();
        String reply = replies.readLine();
        if (reply == null) {
            throw new IllegalStateException("the soak proxy exited (pid " + proxy.pid() + ")");
        }
        Map<String, Long> values = new java.util.HashMap<>();
        for (String kv : reply.substring("sample ".length()).split(" ")) {
            int eq = kv.indexOf('=');
            values.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
        }
        Path proc = Path.of("/proc", String.valueOf(proxy.pid()));
        long fds;
        try (var list = Files.list(proc.resolve("fd"))) {
            fds = list.count();
        }
        long rss = 0;
        long threads = 0;
        for (String line : Files.readAllLines(proc.resolve("status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            } else if (line.startsWith("Threads:")) {
                threads = Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        long ops = done.values().stream().mapToLong(LongAdder::sum).sum();
        return new Sample(second, ops, rss, values.get("heap"), values.get("direct"), values.get("netty"), fds,
                threads, leaks.get());
    }

    private static Process startProxy(Path work, Path policy) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-Xmx128m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseParallelGC",
                "-Dio.netty.leakDetection.level=" + System.getProperty("soak.leakLevel", "paranoid"),
                "-cp", System.getProperty("java.class.path"), SoakProxy.class.getName(),
                policy.toString(), work.toString()));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.PIPE).start();
    }

    private static void readStderr(Process proxy, Path work, AtomicLong leaks, List<String> leakLines) {
        try (BufferedReader err = proxy.errorReader(StandardCharsets.UTF_8);
             Writer log = Files.newBufferedWriter(work.resolve("proxy.log"), StandardCharsets.UTF_8)) {
            for (String line; (line = err.readLine()) != null; ) {
                log.write(line);
                log.write('\n');
                if (line.contains("LEAK:")) {
                    leaks.incrementAndGet();
                    synchronized (leakLines) {
                        if (leakLines.size() < 5) {
                            leakLines.add(line);
                        }
                    }
                }
            }
        } catch (IOException e) {
            leakLines.add("reading the proxy's log failed: " + e);
        }
    }

    private static String awaitFile(Path file, Process proxy) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(file)) {
                return Files.readString(file);
            }
            if (!proxy.isAlive()) {
                throw new IllegalStateException("the soak proxy exited with " + proxy.exitValue()
                        + " before listening; see " + file.resolveSibling("proxy.log"));
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new IllegalStateException("the soak proxy did not listen within 60 s");
    }

    private static SSLContext trusting(Path caPem) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        try (var in = Files.newInputStream(caPem)) {
            store.setCertificateEntry("ca", (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }

    private static String policy(Path work, Path upstreamRoot, int port) {
        return "proxy:\n  listen: 127.0.0.1:3128\n  admin: 127.0.0.1:9901\n"
                + "audit:\n  path: " + work.resolve("audit").resolve("audit.jsonl") + "\n  rotate_bytes: 16777216\n"
                + "upstream:\n  trust: [" + upstreamRoot + "]\n"
                + "network:\n  deny: default\n  allow_private: [\"127.0.0.1:" + port + "\"]\n"
                + "rules:\n"
                + "  - name: private\n    action: deny\n    hosts: [\"*.soak.test\"]\n    ports: [" + port + "]\n"
                + "    paths: [\"/private/**\"]\n"
                + "  - name: soak\n    hosts: [\"*.soak.test\"]\n    ports: [" + port + "]\n"
                + "secrets:\n  - name: SOAK_TOKEN\n    from: file:secret.txt\n    hosts: [api.soak.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + PLACEHOLDER + "\n";
    }
}
