package dev.sallyport.testing.upstream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPOutputStream;

/**
 * A tiny npm registry for tests: HTTPS on {@code 127.0.0.1:0} with a given certificate chain (a {@link LenientUpstream}
 * underneath), serving the packages {@linkplain #publish published} to it the way npm asks for them: the packument
 * (the package's metadata, all versions) at {@code /NAME}, a scoped name with its slash escaped as npm writes it
 * ({@code /@scope%2fpkg}, either case), and each version's tarball at {@code /NAME/-/BASENAME-VERSION.tgz}. Tarballs
 * are built in memory (ustar in gzip, every file under {@code package/}, a {@code package.json} added), with the
 * {@code integrity} (SHA-512) and {@code shasum} npm checks. Anything else is {@code 404}.
 *
 * <pre>{@code
 * NpmRegistry registry = NpmRegistry.start(cert.key(), cert.chain(), "registry.example.test");
 * registry.publish("@scope/pkg", "1.0.0", Map.of("index.js", "module.exports = 42;\n"));
 * // .npmrc: registry=<registry.url()>, https-proxy=..., cafile=...; the name resolves to 127.0.0.1 in the proxy
 * registry.received();     // what npm asked for, request lines as sent (the escape kept)
 * }</pre>
 */
public final class NpmRegistry implements AutoCloseable {

    /** npm's abbreviated packument. */
    public static final String ABBREVIATED = "application/vnd.npm.install-v1+json";

    private final String host;
    /** One published version: its tarball, when it was published (nullable: no time), its install scripts. */
    private record Published(byte[] tarball, Instant at, Map<String, String> scripts) {}

    private final Map<String, Map<String, Published>> packages = new ConcurrentHashMap<>();
    private final LenientUpstream server;

    private NpmRegistry(PrivateKey key, X509Certificate[] chain, String host) {
        this.host = host;
        this.server = LenientUpstream.https(key, chain, this::answer);
    }

    /**
     * Starts a registry presenting {@code chain}; {@code host} is the name clients use for it (in {@link #url()} and
     * the tarball URLs), which the test resolves to {@code 127.0.0.1}.
     */
    public static NpmRegistry start(PrivateKey key, X509Certificate[] chain, String host) {
        return new NpmRegistry(key, chain, host);
    }

    /** The registry's URL as clients use it: {@code https://HOST:PORT/}. */
    public String url() {
        return "https://" + host + ":" + port() + "/";
    }

    public int port() {
        return server.port();
    }

    /**
     * Adds {@code version} of {@code name} ({@code pkg} or {@code @scope/pkg}) with {@code files} (path under the
     * package folder to content); a {@code package.json} naming it is added unless given.
     */
    public NpmRegistry publish(String name, String version, Map<String, String> files) {
        return publish(name, version, files, null, Map.of());
    }

    /**
     * Like {@link #publish(String, String, Map)}, published at {@code at} (the packument's {@code time}; null for
     * none) with {@code scripts} (npm's {@code scripts}, in the tarball's {@code package.json} and the packument).
     */
    public NpmRegistry publish(String name, String version, Map<String, String> files, Instant at,
                               Map<String, String> scripts) {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("package.json", "{\"name\":\"" + name + "\",\"version\":\"" + version + "\",\"main\":\"index.js\""
                + (scripts.isEmpty() ? "" : ",\"scripts\":" + object(scripts)) + "}\n");
        all.putAll(files);
        packages.computeIfAbsent(name, k -> java.util.Collections.synchronizedMap(new LinkedHashMap<>()))
                .put(version, new Published(tarball(all), at, Map.copyOf(scripts)));
        return this;
    }

    private static String object(Map<String, String> map) {
        StringBuilder b = new StringBuilder("{");
        map.forEach((k, v) -> b.append(b.length() > 1 ? "," : "").append('"').append(k).append("\":\"")
                .append(v.replace("\\", "\\\\").replace("\"", "\\\"")).append('"'));
        return b.append('}').toString();
    }

    /** The {@code integrity} of a published version's tarball ({@code sha512-...}), for a lockfile written by hand. */
    public String integrity(String name, String version) {
        return "sha512-" + Base64.getEncoder().encodeToString(digest("SHA-512",
                packages.get(name).get(version).tarball()));
    }

    /** The URL of a published version's tarball. */
    public String tarballUrl(String name, String version) {
        return url() + tarballPath(name, version);
    }

    /** The request lines received so far, as sent ({@code GET /@scope%2fpkg HTTP/1.1}). */
    public List<String> received() {
        return server.received().stream().map(LenientUpstream.Received::requestLine).toList();
    }

    /** Everything received, for the test's assertions. */
    public List<LenientUpstream.Received> requests() {
        return server.received();
    }

    private void answer(LenientUpstream.Received request, LenientUpstream.Conversation c) throws IOException {
        String[] line = request.requestLine().split(" ");
        String path = line.length > 1 ? line[1] : "/";
        int q = path.indexOf('?');
        path = q < 0 ? path : path.substring(0, q);
        boolean head = line[0].equals("HEAD");
        String accept = request.header("Accept");
        boolean abbreviated = accept != null && accept.contains(ABBREVIATED);
        for (Map.Entry<String, Map<String, Published>> p : packages.entrySet()) {
            String name = p.getKey();
            if (path.toLowerCase(Locale.ROOT).equals("/" + escaped(name).toLowerCase(Locale.ROOT))) {
                c.write(ok(abbreviated ? ABBREVIATED : "application/json", packument(name, p.getValue(), abbreviated),
                        head));
                return;
            }
            for (Map.Entry<String, Published> v : inOrder(p.getValue())) {
                if (path.equals("/" + tarballPath(name, v.getKey()))) {
                    c.write(ok("application/octet-stream", v.getValue().tarball(), head));
                    return;
                }
            }
        }
        c.write(LenientUpstream.response(404, "{\"error\":\"not found\"}"));
    }

    /**
     * The packument: full (with {@code time} where versions have one, {@code scripts}, a readme), or abbreviated as
     * npm asks for it ({@code Accept: application/vnd.npm.install-v1+json}: no times, {@code hasInstallScript}).
     * {@code latest} is the last version published.
     */
    private byte[] packument(String name, Map<String, Published> versions, boolean abbreviated) {
        StringBuilder json = new StringBuilder("{\"name\":\"").append(name).append('"');
        if (!abbreviated) {
            json.append(",\"_id\":\"").append(name).append("\",\"readme\":\"the ").append(name).append(" package\"");
        }
        json.append(",\"versions\":{");
        String latest = null;
        StringBuilder time = new StringBuilder();
        for (Map.Entry<String, Published> v : inOrder(versions)) {
            if (latest != null) {
                json.append(',');
            }
            latest = v.getKey();
            Published p = v.getValue();
            json.append('"').append(v.getKey()).append("\":{\"name\":\"").append(name).append("\",\"version\":\"")
                    .append(v.getKey()).append('"');
            if (!p.scripts().isEmpty()) {
                json.append(abbreviated ? ",\"hasInstallScript\":true" : ",\"scripts\":" + object(p.scripts()));
            }
            json.append(",\"dist\":{\"tarball\":\"").append(url())
                    .append(tarballPath(name, v.getKey())).append("\",\"integrity\":\"sha512-")
                    .append(Base64.getEncoder().encodeToString(digest("SHA-512", p.tarball())))
                    .append("\",\"shasum\":\"").append(HexFormat.of().formatHex(digest("SHA-1", p.tarball())))
                    .append("\"}}");
            if (p.at() != null) {
                time.append(",\"").append(v.getKey()).append("\":\"").append(p.at()).append('"');
            }
        }
        json.append("},\"dist-tags\":{\"latest\":\"").append(latest).append("\"}");
        if (!abbreviated && !time.isEmpty()) {
            json.append(",\"time\":{").append(time.substring(1)).append('}');
        }
        return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The versions in the order they were published. */
    private static List<Map.Entry<String, Published>> inOrder(Map<String, Published> versions) {
        synchronized (versions) {
            return List.copyOf(versions.entrySet());
        }
    }

    /** {@code @scope%2fpkg} for a scoped name, the name itself otherwise. */
    private static String escaped(String name) {
        return name.replace("/", "%2f");
    }

    /** {@code @scope/pkg/-/pkg-1.0.0.tgz}. */
    private static String tarballPath(String name, String version) {
        String base = name.substring(name.indexOf('/') + 1);
        return name + "/-/" + base + "-" + version + ".tgz";
    }

    private static byte[] ok(String type, byte[] body, boolean head) {
        byte[] start = ("HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        if (head) {
            return start;
        }
        byte[] out = new byte[start.length + body.length];
        System.arraycopy(start, 0, out, 0, start.length);
        System.arraycopy(body, 0, out, start.length, body.length);
        return out;
    }

    /** A gzipped ustar archive with each file under {@code package/}. */
    static byte[] tarball(Map<String, String> files) {
        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        for (Map.Entry<String, String> f : files.entrySet()) {
            byte[] content = f.getValue().getBytes(StandardCharsets.UTF_8);
            tar.writeBytes(header("package/" + f.getKey(), content.length));
            tar.writeBytes(content);
            tar.writeBytes(new byte[(512 - content.length % 512) % 512]);
        }
        tar.writeBytes(new byte[1024]);     // two zero blocks end the archive
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(tar.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return gz.toByteArray();
    }

    private static byte[] header(String name, int size) {
        byte[] h = new byte[512];
        put(h, 0, name, 100);
        put(h, 100, "0000644", 8);
        put(h, 108, "0000000", 8);
        put(h, 116, "0000000", 8);
        put(h, 124, octal(size, 11), 12);
        put(h, 136, octal(1_700_000_000L, 11), 12);
        Arrays.fill(h, 148, 156, (byte) ' ');
        h[156] = '0';
        put(h, 257, "ustar", 6);
        put(h, 263, "00", 2);
        int sum = 0;
        for (byte b : h) {
            sum += b & 0xFF;
        }
        put(h, 148, octal(sum, 6), 7);
        h[155] = ' ';
        return h;
    }

    /** {@code value} in octal, zero-padded to {@code digits}. */
    private static String octal(long value, int digits) {
        String o = Long.toOctalString(value);
        return "0".repeat(Math.max(0, digits - o.length())) + o;
    }

    private static void put(byte[] into, int at, String text, int field) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        if (b.length > field) {
            throw new IllegalArgumentException("tar field: '" + text + "' longer than " + field + " bytes");
        }
        System.arraycopy(b, 0, into, at, b.length);
    }

    private static byte[] digest(String algorithm, byte[] data) {
        try {
            return MessageDigest.getInstance(algorithm).digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm + " unavailable (expected: a standard JDK)", e);
        }
    }

    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "NpmRegistry[" + url() + ", " + packages.keySet() + "]";
    }
}
