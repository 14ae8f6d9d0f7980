package dev.sallyport.testing.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * A Python package index speaking the "simple" repository API (PEP 503) that pip's {@code --index-url} names:
 * {@code /simple/NAME/} lists the wheels of {@code NAME} (normalized name) with their {@code sha256}, in HTML, or in
 * JSON (PEP 691, with PEP 700's {@code upload-time} and {@code versions}) when the request's {@code Accept} names
 * {@code application/vnd.pypi.simple.v1+json}; {@code /files/WHEEL} serves them. The wheels (PEP 427, pure Python, {@code py3-none-any}) are built here from
 * a few module files each, with their {@code METADATA}, {@code WHEEL} and {@code RECORD}. Anything else is 404.
 */
public final class PythonIndex implements HttpHandler {
    /** PEP 691's JSON form. */
    public static final String JSON = "application/vnd.pypi.simple.v1+json";

    /** One wheel of a project page: its file name, digest, version and upload time (nullable). */
    private record Dist(String file, String sha256, String version, Instant uploaded) {}

    private final Map<String, List<Dist>> pages = new ConcurrentHashMap<>();
    private final Map<String, byte[]> wheels = new ConcurrentHashMap<>();

    /** Adds a wheel of {@code name} {@code version} holding {@code files} (path in site-packages to UTF-8 source). */
    public PythonIndex addWheel(String name, String version, Map<String, String> files) {
        return addWheel(name, version, files, null);
    }

    /** Like {@link #addWheel(String, String, Map)}, uploaded at {@code uploaded} (null: no upload time). */
    public PythonIndex addWheel(String name, String version, Map<String, String> files, Instant uploaded) {
        String dist = name.replaceAll("[-_.]+", "_");
        String file = dist + "-" + version + "-py3-none-any.whl";
        byte[] wheel = wheel(dist + "-" + version + ".dist-info", name, version, files);
        wheels.put("/files/" + file, wheel);
        String sha256 = HexFormat.of().formatHex(Encodings.digest("SHA-256", wheel));
        pages.computeIfAbsent("/simple/" + normalized(name) + "/", k -> new CopyOnWriteArrayList<>())
                .add(new Dist(file, sha256, version, uploaded));
        return this;
    }

    private static byte[] html(List<Dist> dists) {
        StringBuilder b = new StringBuilder("<!DOCTYPE html>\n<html><body>\n");
        for (Dist d : dists) {
            b.append("<a href=\"../../files/").append(d.file()).append("#sha256=").append(d.sha256()).append("\">")
                    .append(d.file()).append("</a>\n");
        }
        return b.append("</body></html>\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] json(String name, List<Dist> dists) {
        StringBuilder b = new StringBuilder("{\"meta\":{\"api-version\":\"1.1\"},\"name\":\"").append(name)
                .append("\",\"files\":[");
        StringBuilder versions = new StringBuilder();
        for (Dist d : dists) {
            b.append(b.charAt(b.length() - 1) == '[' ? "" : ",").append("{\"filename\":\"").append(d.file())
                    .append("\",\"url\":\"../../files/").append(d.file()).append("\",\"hashes\":{\"sha256\":\"")
                    .append(d.sha256()).append("\"}");
            if (d.uploaded() != null) {
                b.append(",\"upload-time\":\"").append(d.uploaded()).append('"');
            }
            b.append('}');
            versions.append(versions.isEmpty() ? "" : ",").append('"').append(d.version()).append('"');
        }
        return b.append("],\"versions\":[").append(versions).append("]}").toString()
                .getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        byte[] wheel = wheels.get(path);
        if (wheel != null) {
            HttpsSite.respond(exchange, 200, "application/octet-stream", wheel);
            return;
        }
        List<Dist> page = pages.get(path);
        if (page == null) {
            HttpsSite.respond(exchange, 404, "not in this index: " + path + "\n");
            return;
        }
        String accept = exchange.getRequestHeaders().getFirst("Accept");
        if (accept != null && accept.contains(JSON)) {
            HttpsSite.respond(exchange, 200, JSON, json(path.split("/")[2], page));
            return;
        }
        HttpsSite.respond(exchange, 200, "text/html; charset=utf-8", html(page));
    }

    /** PEP 503's normalized name: runs of {@code -_.} as one {@code -}, lower case. */
    static String normalized(String name) {
        return name.replaceAll("[-_.]+", "-").toLowerCase(Locale.ROOT);
    }

    private static byte[] wheel(String distInfo, String name, String version, Map<String, String> files) {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        files.forEach((path, text) -> entries.put(path, text.getBytes(StandardCharsets.UTF_8)));
        entries.put(distInfo + "/METADATA", ("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version
                + "\n").getBytes(StandardCharsets.UTF_8));
        entries.put(distInfo + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: sallyport-test-support\n"
                + "Root-Is-Purelib: true\nTag: py3-none-any\n").getBytes(StandardCharsets.UTF_8));
        StringBuilder record = new StringBuilder();
        entries.forEach((path, bytes) -> record.append(path).append(",sha256=")
                .append(Base64.getUrlEncoder().withoutPadding().encodeToString(Encodings.digest("SHA-256", bytes)))
                .append(',').append(bytes.length).append('\n'));
        record.append(distInfo).append("/RECORD,,\n");
        entries.put(distInfo + "/RECORD", record.toString().getBytes(StandardCharsets.UTF_8));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> entry : entries.entrySet()) {
                zip.putNextEntry(new ZipEntry(entry.getKey()));
                zip.write(entry.getValue());
                zip.closeEntry();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
