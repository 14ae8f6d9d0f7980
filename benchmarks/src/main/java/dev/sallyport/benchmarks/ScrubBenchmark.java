package dev.sallyport.benchmarks;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.proxy.inject.ExchangeSecrets;
import dev.sallyport.proxy.inject.InjectionResult;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.proxy.inject.RequestBodyGuard;
import dev.sallyport.proxy.inject.ResponseScrubber;
import dev.sallyport.proxy.inject.SecretStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The per-request cost of secrets on the data path, with five secrets configured (each searched in its
 * raw, base64, percent-encoded and JSON-escaped forms):
 * <ul>
 *   <li>{@code injectBearer}: one request head of 12 headers to a bound host, placeholder swapped;</li>
 *   <li>{@code scrubResponse1MiB}: a 1 MiB JSON-like response body streamed in 16 KiB chunks through the
 *       scrubber, two real values reflected in it;</li>
 *   <li>{@code guardRequestBody1MiB}: a clean 1 MiB request body checked for placeholders and values.</li>
 * </ul>
 * Run: {@code mvn -B -ntp -pl benchmarks -am package -DskipTests && java -jar benchmarks/target/benchmarks.jar
 * ScrubBenchmark -f 1 -wi 3 -i 5}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ScrubBenchmark {

    private static final int CHUNK = 16 * 1024;

    private SecretStore store;
    private String placeholder;
    private byte[] body;
    private byte[] cleanBody;
    private HttpHeaders template;

    @Setup
    public void setUp() throws Exception {
        Random rnd = new Random(1);
        Map<String, String> env = new java.util.HashMap<>();
        List<SecretSpec> specs = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            env.put("S" + i, "tok_" + i + "_" + Long.toHexString(rnd.nextLong()) + Long.toHexString(rnd.nextLong()));
            specs.add(new SecretSpec("S" + i, i + 1, new SecretSource.Env("S" + i),
                    List.of(HostPattern.parse("api" + i + ".example.com")), List.of("Authorization"), null, false, false, false));
        }
        store = SecretStore.load(specs, Placeholders.ephemeral(), env::get, InstantSource.system());
        placeholder = store.placeholders().get("S0");
        StringBuilder sb = new StringBuilder(1 << 20);
        while (sb.length() < (1 << 20)) {
            sb.append("{\"id\":").append(rnd.nextInt()).append(",\"name\":\"package-").append(rnd.nextInt(1000))
                    .append("\",\"description\":\"Lorem ipsum dolor sit amet, consectetur adipiscing elit\"},\n");
        }
        cleanBody = sb.substring(0, 1 << 20).getBytes(StandardCharsets.US_ASCII);
        sb.insert(300_000, env.get("S0")).insert(700_000, env.get("S3"));
        body = sb.substring(0, 1 << 20).getBytes(StandardCharsets.US_ASCII);
        template = new DefaultHttpHeaders()
                .add("Host", "api0.example.com").add("User-Agent", "bench/1.0").add("Accept", "application/json")
                .add("Accept-Language", "en").add("Accept-Encoding", "gzip, deflate, br").add("Connection", "keep-alive")
                .add("Content-Type", "application/json").add("X-Request-Id", "0f8fad5b-d9cb-469f-a165-70867728950e")
                .add("Cache-Control", "no-cache").add("Cookie", "a=b; c=d").add("Referer", "https://www.example.org/x")
                .add("Authorization", "Bearer " + placeholder);
    }

    @Benchmark
    public InjectionResult injectBearer() {
        HttpHeaders h = new DefaultHttpHeaders().set(template);
        return store.exchange("api0.example.com").inject(h, "/v1/repos/acme/widget/issues?state=open&per_page=100");
    }

    @Benchmark
    public void scrubResponse1MiB(Blackhole bh) throws Exception {
        ExchangeSecrets ex = store.exchange("api0.example.com");
        try (ResponseScrubber s = ex.responseScrubber(ByteBufAllocator.DEFAULT, 64L << 20)) {
            for (int i = 0; i < body.length; i += CHUNK) {
                s.onContent(Unpooled.wrappedBuffer(body, i, Math.min(CHUNK, body.length - i)), b -> consume(bh, b));
            }
            s.onLast(new DefaultHttpHeaders(), b -> consume(bh, b));
        }
    }

    @Benchmark
    public Object guardRequestBody1MiB() {
        RequestBodyGuard g = store.exchange("api0.example.com").bodyGuard();
        for (int i = 0; i < cleanBody.length; i += CHUNK) {
            ByteBuf b = Unpooled.wrappedBuffer(cleanBody, i, Math.min(CHUNK, cleanBody.length - i));
            if (g.check(b) != null) {
                return b;
            }
        }
        return g.finish();
    }

    private static void consume(Blackhole bh, ByteBuf b) {
        bh.consume(b.readableBytes());
        b.release();
    }
}
