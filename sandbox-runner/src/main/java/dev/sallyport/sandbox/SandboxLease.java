package dev.sallyport.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A sandbox's registration with a shared proxy, held for the run: registered through the proxy's admin listener
 * (bearer admin token) with the run's identity, policy name, own rules and lease; renewed on a thread of its own at a
 * third of the lease; forgotten on {@link #close()}. If the runner dies, the lease runs out and the proxy forgets
 * the sandbox by itself. The token the proxy answers is the sandbox's identity on every connection its relay makes;
 * it never enters the sandbox. The admin calls are plain HTTP/1.1 over one loopback connection each (no HTTP client
 * library: the run starts faster).
 */
final class SandboxLease implements AutoCloseable {

    /** What the runner reports refusing (the proxy's {@code ReportedRefusal} reasons): a spoofed source on the bridge. */
    static final String SPOOFED_SOURCE = "spoofed_source";
    /** ... and a connection to the gateway relay from an address other than the guest's. */
    static final String WRONG_RELAY_PEER = "wrong_relay_peer";

    private static final String TOKEN_HEADER = "X-Sallyport-Sandbox-Token";
    private static final int MAX_ANSWER = 1 << 20;

    private final SandboxRun.ProxyMode.Attached proxy;
    private final String token;
    private final Map<String, String> placeholders;
    private final Thread renewer;
    private final PrintStream err;
    private volatile boolean closed;

    private SandboxLease(SandboxRun.ProxyMode.Attached proxy, String token, Map<String, String> placeholders,
                         PrintStream err) {
        this.proxy = proxy;
        this.token = token;
        this.placeholders = Map.copyOf(placeholders);
        this.err = err;
        this.renewer = Thread.ofPlatform().daemon().name("sallyport-lease").unstarted(this::renewUntilClosed);
    }

    /** Registers the sandbox with {@code rules} (a policy file's text whose rules are the sandbox's; may be empty). */
    static SandboxLease register(SandboxRun.ProxyMode.Attached proxy, String rules, PrintStream err)
            throws SandboxException {
        String query = "/sandboxes?identity=" + encode(proxy.identity()) + proxy.policy().map(p -> "&policy="
                + encode(p)).orElse("") + "&lease=" + proxy.lease().toSeconds();
        Answer a = call(proxy, "POST", query, null, rules.getBytes(StandardCharsets.UTF_8));
        if (a.status() != 201) {
            throw new SandboxException("--proxy-admin " + hostPort(proxy.admin()) + ": registering sandbox "
                    + proxy.identity() + " refused: " + a.status() + " " + a.firstLine()
                    + " (expected: 201 with the admin token, a free identity and valid rules)");
        }
        String token = null;
        Map<String, String> placeholders = new LinkedHashMap<>();
        for (String line : a.body().split("\n")) {
            String[] f = line.split(" ");
            if (f.length == 2 && f[0].equals("token")) {
                token = f[1];
            } else if (f.length == 3 && f[0].equals("placeholder")) {
                placeholders.put(f[1], f[2]);
            }
        }
        if (token == null) {
            throw new SandboxException("--proxy-admin " + hostPort(proxy.admin()) + ": the registration's answer has"
                    + " no token (expected: a Sallyport proxy's admin listener)");
        }
        SandboxLease lease = new SandboxLease(proxy, token, placeholders, err);
        lease.renewer.start();
        return lease;
    }

    /** The token the relay presents. */
    String token() {
        return token;
    }

    /** Secret name to placeholder: the proxy's secrets this sandbox may use. */
    Map<String, String> placeholders() {
        return placeholders;
    }

    /**
     * Reports an attempt the runner refused on the host for this sandbox ({@code reason} from {@code source}): the
     * proxy audits it under the sandbox's identity. A failed report is a line on the run's error stream (the attempt
     * was refused all the same).
     */
    void refused(String reason, String source) {
        String what = "reporting " + reason + " from " + source + " for sandbox " + proxy.identity();
        try {
            Answer a = call(proxy, "POST", "/sandboxes/" + encode(proxy.identity()) + "/refused?reason="
                    + encode(reason) + "&source=" + encode(source), token, new byte[0]);
            if (a.status() != 200) {
                err.println("sallyport: " + what + " failed: " + a.status() + " " + a.firstLine());
            }
        } catch (SandboxException e) {
            err.println("sallyport: " + what + " failed: " + e.getMessage());
        }
    }

    private void renewUntilClosed() {
        long every = Math.max(1_000, proxy.lease().toMillis() / 3);
        while (!closed) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            try {
                Answer a = call(proxy, "POST", "/sandboxes/" + encode(proxy.identity()) + "/lease?lease="
                        + proxy.lease().toSeconds(), token, new byte[0]);
                if (a.status() != 200 && !closed) {
                    err.println("sallyport: renewing the lease of sandbox " + proxy.identity() + " failed: "
                            + a.status() + " " + a.firstLine() + " (its connections are refused once it runs out)");
                }
            } catch (SandboxException e) {
                if (!closed) {
                    err.println("sallyport: renewing the lease of sandbox " + proxy.identity() + " failed: "
                            + e.getMessage());
                }
            }
        }
    }

    /** Stops renewing and tells the proxy to forget the sandbox (a failure is a notice: the lease runs out anyway). */
    @Override
    public void close() {
        closed = true;
        renewer.interrupt();
        try {
            Answer a = call(proxy, "DELETE", "/sandboxes/" + encode(proxy.identity()), token, null);
            if (a.status() != 200) {
                err.println("sallyport: the proxy did not forget sandbox " + proxy.identity() + ": " + a.status()
                        + " " + a.firstLine() + " (its lease runs out in " + proxy.lease().toSeconds() + " s)");
            }
        } catch (SandboxException e) {
            err.println("sallyport: " + e.getMessage() + " (the lease runs out in " + proxy.lease().toSeconds()
                    + " s)");
        }
    }

    /** The status and body of an admin answer. */
    private record Answer(int status, String body) {
        String firstLine() {
            int nl = body.indexOf('\n');
            return nl < 0 ? body : body.substring(0, nl);
        }
    }

    private static Answer call(SandboxRun.ProxyMode.Attached proxy, String method, String target,
                               /* @Nullable */ String sandboxToken, /* @Nullable */ byte[] body)
            throws SandboxException {
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                .append("Host: ").append(hostPort(proxy.admin())).append("\r\n")
                .append("Authorization: Bearer ").append(proxy.adminToken()).append("\r\n")
                .append("Connection: close\r\n");
        if (sandboxToken != null) {
            head.append(TOKEN_HEADER).append(": ").append(sandboxToken).append("\r\n");
        }
        if (body != null) {
            head.append("Content-Type: application/yaml\r\nContent-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        try (SocketChannel ch = SocketChannel.open(proxy.admin())) {
            ch.socket().setSoTimeout(10_000);
            ByteBuffer out = ByteBuffer.allocate(head.length() + (body == null ? 0 : body.length));
            out.put(head.toString().getBytes(StandardCharsets.US_ASCII));
            if (body != null) {
                out.put(body);
            }
            out.flip();
            while (out.hasRemaining()) {
                ch.write(out);
            }
            ByteArrayOutputStream in = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(16 * 1024);
            while (ch.read(buf) >= 0 && in.size() < MAX_ANSWER) {
                in.write(buf.array(), 0, buf.position());
                buf.clear();
            }
            String text = in.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            if (!text.startsWith("HTTP/1.1 ") || end < 0 || text.length() < 12) {
                throw new SandboxException("--proxy-admin " + hostPort(proxy.admin()) + ": not an HTTP answer "
                        + "(expected: a Sallyport proxy's admin listener)");
            }
            return new Answer(Integer.parseInt(text.substring(9, 12)), text.substring(end + 4));
        } catch (IOException | NumberFormatException e) {
            throw new SandboxException("--proxy-admin " + hostPort(proxy.admin()) + ": " + e.getClass().getSimpleName()
                    + ": " + e.getMessage() + " (expected: the running proxy's admin listener)", e);
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String hostPort(InetSocketAddress a) {
        return a.getHostString() + ":" + a.getPort();
    }

    @Override
    public String toString() {
        return "SandboxLease[" + proxy.identity() + ", token=hidden]";
    }
}
