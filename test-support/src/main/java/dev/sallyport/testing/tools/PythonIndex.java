package dev.sallyport.testing.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * A Python package index speaking the "simple" repository API (PEP 503) that pip's {@code --index-url} names:
 * {@code /simple/NAME/} lists the wheels of {@code NAME} (normalized name) with their {@code sha256}, and
 * {@code /files/WHEEL} serves them. The wheels (PEP 427, pure Python, {@code py3-none-any}) are built here from
 * a few module files each, with their {@code METADATA}, {@code WHEEL} and {@code RECORD}. Anything else is 404.
 */
public final class PythonIndex implements HttpHandler {
    private final Map<String, String> pages = new ConcurrentHashMap<>();
    private final Map<String, byte[]> wheels = new ConcurrentHashMap<>();

    /** Adds a wheel of {@code name} {@code version} holding {@code files} (path in site-packages to UTF-8 source). */
    public PythonIndex addWheel(String name, String version, Map<String, String> files) {
        String dist = name.replaceAll("[-_.]+", "_");
        String file = dist + "-" + version + "-py3-none-any.whl";
        byte[] wheel = wheel(dist + "-" + version + ".dist-info", name, version, files);
        wheels.put("/files/" + file, wheel);
        String sha256 = HexFormat.of().formatHex(Encodings.digest("SHA-256", wheel));
        pages.put("/simple/" + normalized(name) + "/", "<!DOCTYPE html>\n<html><body>\n<a href=\"../../files/"
                + file + "#sha256=" + sha256 + "\">" + file + "</a>\n</body></html>\n");
        return this;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        byte[] wheel = wheels.get(path);
        if (wheel != null) {
            HttpsSite.respond(exchange, 200, "application/octet-stream", wheel);
            return;
        }
        String page = pages.get(path);
        if (page == null) {
            HttpsSite.respond(exchange, 404, "not in this index: " + path + "\n");
            return;
        }
        HttpsSite.respond(exchange, 200, "text/html; charset=utf-8", page.getBytes(StandardCharsets.UTF_8));
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
