package dev.sallyport.benchmarks.peers;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What one load run does, parsed from {@code --name value} arguments.
 *
 * @param target      where TCP connects when there is no proxy (the upstream's address)
 * @param port        the upstream port named in CONNECT and the Host header
 * @param path        request path
 * @param hosts       host names used in turn (CONNECT target, SNI and Host)
 * @param proxy       HTTP proxy to CONNECT through, or null for direct
 * @param connections concurrent connections (slots)
 * @param newConnectionPerRequest true: each request opens a new connection and does a full TLS handshake
 * @param warmup      load before measuring (not counted)
 * @param duration    measured time (upper bound when {@code requests} is set)
 * @param requests    total requests to send, 0 = until {@code duration} ends
 * @param threads     event loop threads
 * @param idleTunnels open this many tunnels, one request each, hold them {@code duration}, report RSS
 * @param watchPid    process whose tree's CPU time and peak RSS are reported, 0 = none
 * @param trust       PEM file of trusted CAs, or null to accept any certificate
 * @param h2Streams   0: HTTP/1.1; else HTTP/2 (ALPN h2) with this many streams in flight per connection
 */
record LoadOptions(InetSocketAddress target, int port, String path, List<String> hosts, InetSocketAddress proxy,
                   int connections, boolean newConnectionPerRequest, Duration warmup, Duration duration,
                   long requests, int threads, int idleTunnels, long watchPid, Path trust, int h2Streams) {

    static LoadOptions parse(String[] args) {
        URI url = null;
        String connectTo = null;
        String proxy = null;
        String hostPattern = null;
        int hostCount = 1;
        int connections = 16;
        boolean fresh = false;
        double warmup = 2;
        double duration = 10;
        long requests = 0;
        int threads = 1;
        int idle = 0;
        long pid = 0;
        Path trust = null;
        int h2Streams = 0;
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (name.equals("--new-connection")) {
                fresh = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(name + ": missing value (expected: " + name + " VALUE)");
            }
            String value = args[++i];
            switch (name) {
                case "--url" -> url = URI.create(value);
                case "--connect-to" -> connectTo = value;
                case "--proxy" -> proxy = value;
                case "--hosts" -> hostPattern = value;
                case "--host-count" -> hostCount = positive(name, Integer.parseInt(value));
                case "--connections" -> connections = positive(name, Integer.parseInt(value));
                case "--warmup" -> warmup = Double.parseDouble(value);
                case "--duration" -> duration = Double.parseDouble(value);
                case "--requests" -> requests = Long.parseLong(value);
                case "--threads" -> threads = positive(name, Integer.parseInt(value));
                case "--idle-tunnels" -> idle = positive(name, Integer.parseInt(value));
                case "--watch-pid" -> pid = Long.parseLong(value);
                case "--trust" -> trust = Path.of(value);
                case "--h2-streams" -> h2Streams = positive(name, Integer.parseInt(value));
                default -> throw new IllegalArgumentException(name + ": unknown option (expected: --url, --connect-to,"
                        + " --proxy, --hosts, --host-count, --connections, --new-connection, --warmup, --duration,"
                        + " --requests, --threads, --idle-tunnels, --watch-pid, --trust, --h2-streams)");
            }
        }
        if (url == null || !"https".equals(url.getScheme()) || url.getPort() <= 0) {
            throw new IllegalArgumentException("--url: " + url + " (expected: https://HOST:PORT/PATH)");
        }
        List<String> hosts = new ArrayList<>();
        if (hostPattern == null) {
            hosts.add(url.getHost());
        } else {
            for (int n = 1; n <= hostCount; n++) {
                hosts.add(String.format(hostPattern, n));
            }
        }
        InetSocketAddress target = connectTo == null ? new InetSocketAddress(url.getHost(), url.getPort())
                : address("--connect-to", connectTo);
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        return new LoadOptions(target, url.getPort(), path, List.copyOf(hosts),
                proxy == null ? null : address("--proxy", proxy), connections, fresh,
                Duration.ofMillis((long) (warmup * 1000)), Duration.ofMillis((long) (duration * 1000)), requests,
                threads, idle, pid, trust, h2Streams);
    }

    private static int positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
        return value;
    }

    private static InetSocketAddress address(String name, String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException(name + ": " + hostPort + " (expected: HOST:PORT)");
        }
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
