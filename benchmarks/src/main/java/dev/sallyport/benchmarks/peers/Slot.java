package dev.sallyport.benchmarks.peers;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One logical client: a sequence of connections pinned to one event loop, so its counters need no locks. In
 * keep-alive mode it sends the next request on the same connection; otherwise it opens a new connection (new
 * TCP, CONNECT, full TLS handshake) per request.
 */
final class Slot {

    private static final int MAX_ERRORS = 1_000;

    private final Run run;
    private final EventLoop loop;
    private final Class<? extends SocketChannel> channelType;
    long requests;
    long bytes;
    long errors;
    private long[] latencies = new long[1024];
    private int latencyCount;
    private boolean finished;
    Channel channel;
    private long connectStarted;
    private long requestStarted;
    private String host;
    private byte[] request;
    boolean established;
    private boolean inFlight;

    Slot(Run run, EventLoop loop, Class<? extends SocketChannel> channelType) {
        this.run = run;
        this.loop = loop;
        this.channelType = channelType;
    }

    void start() {
        loop.execute(this::open);
    }

    private void open() {
        long ticket = run.nextTicket();
        if (ticket < 0 || errors > MAX_ERRORS) {
            finish();
            return;
        }
        String next = run.options().hosts().get((int) (ticket % run.options().hosts().size()));
        if (!next.equals(host)) {
            host = next;
            request = null;
        }
        connectStarted = System.nanoTime();
        LoadOptions o = run.options();
        Bootstrap bootstrap = new Bootstrap().group(loop).channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                .handler(new ClientInitializer(run, this, host));
        bootstrap.connect(o.proxy() != null ? o.proxy() : o.target()).addListener(f -> {
            if (f.isSuccess()) {
                channel = ((io.netty.channel.ChannelFuture) f).channel();
                channel.closeFuture().addListener(c -> closed());
            } else {
                errors++;
                loop.execute(this::open);
            }
        });
    }

    /** TLS is up (directly or inside the tunnel): send the first request (or, on HTTP/2, the first streams). */
    void ready(ChannelHandlerContext ctx) {
        established = true;
        if (run.options().h2Streams() > 0) {
            inFlight = true;
            H2Streams.start(ctx, this, run, host);
            return;
        }
        send(ctx);
    }

    /** An HTTP/2 stream ended ({@code ok}: a 200 read to its end) after {@code started}. */
    void streamDone(boolean ok, long started) {
        if (!ok) {
            errors++;
        } else if (run.measuring()) {
            requests++;
            record(System.nanoTime() - started);
        }
    }

    /** True while the run hands out requests; takes one. */
    boolean nextRequest() {
        return run.nextTicket() >= 0 && errors <= MAX_ERRORS;
    }

    private void send(ChannelHandlerContext ctx) {
        requestStarted = System.nanoTime();
        inFlight = true;
        if (request == null) {
            String text = "GET " + run.options().path() + " HTTP/1.1\r\nHost: " + host + ":" + run.options().port()
                    + "\r\nUser-Agent: sallyport-loadgen\r\nAccept: */*\r\n\r\n";
            request = text.getBytes(StandardCharsets.US_ASCII);
        }
        ctx.writeAndFlush(Unpooled.wrappedBuffer(request));
    }

    void body(int n) {
        if (run.measuring()) {
            bytes += n;
        }
    }

    /** A full response arrived. */
    void completed(ChannelHandlerContext ctx, boolean ok) {
        long now = System.nanoTime();
        inFlight = false;
        if (!ok) {
            errors++;
        } else if (run.measuring()) {
            requests++;
            record(now - (run.options().newConnectionPerRequest() ? connectStarted : requestStarted));
        }
        if (run.options().idleTunnels() > 0) {
            run.tunnelReady();
            return;
        }
        if (run.options().newConnectionPerRequest() || !ok) {
            ctx.close();
        } else if (run.nextTicket() >= 0) {
            send(ctx);
        } else {
            ctx.close();
        }
    }

    /** A connection failed before its response; failures caused by the end of the run do not count. */
    void failed() {
        if (!run.stopping()) {
            errors++;
        }
    }

    private void closed() {
        channel = null;
        if (inFlight) {
            inFlight = false;
            if (!run.stopping()) {
                errors++;
            }
        }
        if (run.options().idleTunnels() > 0) {
            finish();
        } else if (!run.stopping()) {
            open();
        } else {
            finish();
        }
    }

    private void record(long nanos) {
        if (latencyCount == latencies.length) {
            latencies = Arrays.copyOf(latencies, latencies.length * 2);
        }
        latencies[latencyCount++] = nanos;
    }

    private void finish() {
        if (!finished) {
            finished = true;
            run.slotFinished();
        }
    }

    long[] latencies() {
        return Arrays.copyOf(latencies, latencyCount);
    }

    EventLoop loop() {
        return loop;
    }
}
