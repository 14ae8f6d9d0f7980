package dev.sallyport.testing.tools;

import static dev.sallyport.testing.tools.Encodings.digest;
import static dev.sallyport.testing.tools.Encodings.json;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPOutputStream;

/**
 * An npm registry with a few packages built here: for each name (plain, or scoped {@code @scope/name}) a
 * packument, the JSON document npm asks for by name (the scope's slash sent encoded, {@code @scope%2fname}, as
 * npm sends it, or not), and the tarball it points to ({@code package/package.json} and the given files, in a
 * gzip'd ustar archive), with its {@code sha512} integrity and {@code sha1} shasum. Anything else is 404.
 */
public final class NpmRegistry implements HttpHandler {
    private static final String TARBALL = "/-/";

    private final String origin;
    private final Map<String, String> packuments = new ConcurrentHashMap<>();
    private final Map<String, byte[]> tarballs = new ConcurrentHashMap<>();

    /** @param origin the registry's URL as clients reach it, without a trailing slash (tarball URLs start with it) */
    public NpmRegistry(String origin) {
        this.origin = origin.endsWith("/") ? origin.substring(0, origin.length() - 1) : origin;
    }

    /**
     * Publishes {@code name@version} with a generated {@code package.json} ({@code name}, {@code version},
     * {@code main: index.js}) and {@code files} (path below {@code package/} to UTF-8 content).
     */
    public NpmRegistry publish(String name, String version, Map<String, String> files) {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        entries.put("package/package.json", ("{\"name\":" + json(name) + ",\"version\":" + json(version)
                + ",\"main\":\"index.js\"}\n").getBytes(StandardCharsets.UTF_8));
        files.forEach((path, text) -> entries.put("package/" + path, text.getBytes(StandardCharsets.UTF_8)));
        byte[] tgz = tarGz(entries);
        String base = name.substring(name.lastIndexOf('/') + 1);
        String path = "/" + name + TARBALL + base + "-" + version + ".tgz";
        tarballs.put(path, tgz);
        String integrity = "sha512-" + Base64.getEncoder().encodeToString(digest("SHA-512", tgz));
        String shasum = HexFormat.of().formatHex(digest("SHA-1", tgz));
        String manifest = "{\"name\":" + json(name) + ",\"version\":" + json(version) + ",\"main\":\"index.js\","
                + "\"dist\":{\"tarball\":" + json(origin + path) + ",\"integrity\":" + json(integrity)
                + ",\"shasum\":" + json(shasum) + "}}";
        packuments.put(name, "{\"name\":" + json(name) + ",\"dist-tags\":{\"latest\":" + json(version) + "},"
                + "\"versions\":{" + json(version) + ":" + manifest + "}}");
        return this;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String raw = exchange.getRequestURI().getRawPath();
        byte[] tarball = tarballs.get(raw);
        if (tarball != null) {
            HttpsSite.respond(exchange, 200, "application/octet-stream", tarball);
            return;
        }
        String name = raw.length() > 1 ? raw.substring(1).replace("%2f", "/").replace("%2F", "/") : "";
        String packument = packuments.get(name);
        if (packument == null || !"GET".equals(exchange.getRequestMethod())) {
            HttpsSite.respond(exchange, 404, "application/json", "{\"error\":\"not found\"}"
                    .getBytes(StandardCharsets.UTF_8));
            return;
        }
        HttpsSite.respond(exchange, 200, "application/json", packument.getBytes(StandardCharsets.UTF_8));
    }

    /** A gzip'd ustar archive of regular files (mode 0644, owner 0, a fixed time), in the given order. */
    static byte[] tarGz(Map<String, byte[]> files) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> file : files.entrySet()) {
                gzip.write(ustarHeader(file.getKey(), file.getValue().length));
                gzip.write(file.getValue());
                gzip.write(new byte[(512 - file.getValue().length % 512) % 512]);
            }
            gzip.write(new byte[1024]);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static byte[] ustarHeader(String name, int size) {
        byte[] name8 = name.getBytes(StandardCharsets.UTF_8);
        if (name8.length > 100) {
            throw new IllegalArgumentException("tar entry name: " + name + " (expected: at most 100 bytes)");
        }
        byte[] header = new byte[512];
        System.arraycopy(name8, 0, header, 0, name8.length);
        octal(header, 100, 8, 0644);
        octal(header, 108, 8, 0);
        octal(header, 116, 8, 0);
        octal(header, 124, 12, size);
        octal(header, 136, 12, 1_700_000_000L);
        header[156] = '0';
        System.arraycopy(("ustar" + (char) 0 + "00").getBytes(StandardCharsets.US_ASCII), 0, header, 257, 8);
        for (int i = 148; i < 156; i++) {
            header[i] = ' ';
        }
        int sum = 0;
        for (byte b : header) {
            sum += b & 0xff;
        }
        octal(header, 148, 7, sum);
        return header;
    }

    /** {@code value} as zero-padded octal digits filling {@code length - 1} bytes, then a NUL. */
    private static void octal(byte[] header, int at, int length, long value) {
        String digits = Long.toOctalString(value);
        String padded = "0".repeat(length - 1 - digits.length()) + digits;
        System.arraycopy(padded.getBytes(StandardCharsets.US_ASCII), 0, header, at, length - 1);
        header[at + length - 1] = 0;
    }
}
