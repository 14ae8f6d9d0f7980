package dev.sallyport.benchmarks.peers;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * HTTPS load generator: Netty on epoll with BoringSSL, HTTP/1.1, directly or through an HTTP proxy's CONNECT.
 * Prints one line: {@code result rps=.. mibps=.. p50_ms=.. p99_ms=.. requests=.. errors=.. seconds=..
 * cpu_ms_per_req=.. hwm_mib=.. client_cpu_us_per_req=.. jit_ms_per_req=..} (CPU and peak RSS of the process
 * tree of {@code --watch-pid}, the generator's own CPU time per request, and the part of the watched CPU time
 * that a JVM's JIT compiler threads spent).
 *
 * <pre>java -cp benchmarks.jar dev.sallyport.benchmarks.peers.LoadGen --url https://www.bench.test:8443/small
 *     [--proxy 127.0.0.1:3128] [--connect-to 127.0.0.1:8443] [--connections 32] [--new-connection]
 *     [--hosts h%04d.bench.test --host-count 1000] [--requests 1000] [--warmup 2] [--duration 10]
 *     [--threads 1] [--idle-tunnels 10000] [--watch-pid PID] [--trust ca.pem]</pre>
 */
public final class LoadGen {

    private LoadGen() {}

    public static void main(String[] args) throws Exception {
        LoadOptions options;
        try {
            options = LoadOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("loadgen: " + e.getMessage());
            System.exit(2);
            return;
        }
        SslContextBuilder tls = SslContextBuilder.forClient()
                .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK);
        if (options.h2Streams() > 0) {
            tls.applicationProtocolConfig(new io.netty.handler.ssl.ApplicationProtocolConfig(
                    io.netty.handler.ssl.ApplicationProtocolConfig.Protocol.ALPN,
                    io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                    io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                    io.netty.handler.ssl.ApplicationProtocolNames.HTTP_2));
        }
        SslContext ssl = options.trust() == null ? tls.trustManager(InsecureTrustManagerFactory.INSTANCE).build()
                : tls.trustManager(options.trust().toFile()).build();
        IoHandlerFactory io = Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        Class<? extends SocketChannel> type = Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(options.threads(), io);
        Run run = new Run(options, ssl);
        int slots = options.idleTunnels() > 0 ? options.idleTunnels() : options.connections();
        for (int i = 0; i < slots; i++) {
            run.add(new Slot(run, group.next(), type));
        }
        ProcessTree watched = options.watchPid() > 0 ? new ProcessTree(options.watchPid()) : null;
        String line;
        if (options.idleTunnels() > 0) {
            line = idle(run, watched);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        } else {
            Window window = load(run, watched);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            line = summary(run, watched, window);
        }
        System.out.println(line);
        System.exit(0);
    }

    /** The measured window: its length and the watched tree's CPU time spent in it. */
    private record Window(double seconds, double cpuSeconds, double jitSeconds, double ownCpuSeconds) {}

    private static Window load(Run run, ProcessTree watched) throws InterruptedException {
        LoadOptions o = run.options();
        boolean counted = o.requests() > 0;
        run.start(Integer.MAX_VALUE);
        if (!counted && !o.warmup().isZero()) {
            Thread.sleep(o.warmup());
        }
        ProcessTree self = new ProcessTree(ProcessHandle.current().pid());
        double cpu0 = watched == null ? 0 : watched.cpuSeconds();
        double jit0 = watched == null ? 0 : watched.jitSeconds();
        double own0 = self.cpuSeconds();
        long t0 = System.nanoTime();
        run.measuring(true);
        run.finished().await(o.duration().toMillis(), TimeUnit.MILLISECONDS);
        run.measuring(false);
        Window window = new Window((System.nanoTime() - t0) / 1e9,
                watched == null ? 0 : watched.cpuSeconds() - cpu0,
                watched == null ? 0 : watched.jitSeconds() - jit0, self.cpuSeconds() - own0);
        run.stop();
        for (Slot slot : run.slots()) {
            slot.loop().execute(() -> {
                if (slot.channel != null) {
                    slot.channel.close();
                }
            });
        }
        run.finished().await(15, TimeUnit.SECONDS);
        return window;
    }

    private static String summary(Run run, ProcessTree watched, Window window) {
        double seconds = window.seconds();
        double cpuSeconds = window.cpuSeconds();
        long requests = 0;
        long bytes = 0;
        long errors = 0;
        int n = 0;
        long[][] parts = new long[run.slots().size()][];
        for (int i = 0; i < parts.length; i++) {
            Slot s = run.slots().get(i);
            requests += s.requests;
            bytes += s.bytes;
            errors += s.errors;
            parts[i] = s.latencies();
            n += parts[i].length;
        }
        long[] all = new long[n];
        int at = 0;
        for (long[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        Arrays.sort(all);
        double hwm = watched == null ? 0 : watched.peakRssMiB();
        return String.format(Locale.ROOT, "result rps=%.1f mibps=%.2f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d"
                        + " seconds=%.2f cpu_ms_per_req=%.4f hwm_mib=%.1f client_cpu_us_per_req=%.1f"
                        + " jit_ms_per_req=%.4f",
                requests / seconds, bytes / seconds / (1 << 20), percentile(all, 0.50), percentile(all, 0.99),
                requests, errors, seconds, requests == 0 ? 0 : cpuSeconds * 1000 / requests, hwm,
                requests == 0 ? 0 : window.ownCpuSeconds() * 1e6 / requests,
                requests == 0 ? 0 : window.jitSeconds() * 1000 / requests);
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, index)] / 1e6;
    }

    /** Opens the tunnels (at most 200 opening at once), holds them, samples the watched tree's RSS. */
    private static String idle(Run run, ProcessTree watched) throws InterruptedException {
        LoadOptions o = run.options();
        run.measuring(false);
        run.start(200);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (run.readyTunnels() < run.slots().size() && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        int ready = run.readyTunnels();
        double rss = 0;
        long holdEnd = System.nanoTime() + o.duration().toNanos();
        while (System.nanoTime() < holdEnd) {
            rss = Math.max(rss, watched == null ? 0 : watched.rssMiB());
            Thread.sleep(250);
        }
        double hwm = watched == null ? 0 : watched.peakRssMiB();
        run.stop();
        run.startRemaining();
        long errors = 0;
        for (Slot slot : run.slots()) {
            slot.loop().execute(() -> {
                Channel ch = slot.channel;
                if (ch != null) {
                    ch.close();
                }
            });
        }
        run.finished().await(30, TimeUnit.SECONDS);
        for (Slot slot : run.slots()) {
            errors += slot.errors;
        }
        return String.format(Locale.ROOT, "result tunnels=%d ready=%d errors=%d rss_mib=%.1f hwm_mib=%.1f",
                run.slots().size(), ready, errors, rss, hwm);
    }
}
