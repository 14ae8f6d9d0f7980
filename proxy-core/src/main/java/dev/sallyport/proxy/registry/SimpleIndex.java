package dev.sallyport.proxy.registry;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.Registry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Filters a PyPI Simple API project page per file. The page is always read in its JSON form (PEP 691, with
 * PEP 700's {@code upload-time}, which the HTML form lacks), and answered in the form the client asked for: JSON, or
 * the HTML form (PEP 503) built from it. A refused file stays listed, marked yanked (PEP 592) with the reason: pip
 * and its peers then pass over it unless nothing else matches (an {@code ==} pin), and print the reason when they do
 * pick it, before its download is refused. A version's upload time is its earliest file's.
 */
public final class SimpleIndex {

    /** The JSON form's media type. */
    public static final String JSON_TYPE = "application/vnd.pypi.simple.v1+json";
    /** The HTML form's media type (PEP 691's name for it). */
    public static final String HTML_TYPE = "application/vnd.pypi.simple.v1+html";
    private static final JsonFactory JSON = new JsonFactory();

    /** One file of the page, as much as the HTML form needs. */
    private record FileEntry(String filename, String url, String sha256, String requiresPython, String yanked,
                             String version) {}

    private SimpleIndex() {}

    /** Filters a PEP 691 JSON page; {@code html}: answer in the HTML form. */
    public static FilteredDocument filter(byte[] json, Registry registry, String project, Instant now, boolean html)
            throws UnreadableDocument {
        try {
            return filtered(json, registry, project, now, html);
        } catch (IOException | UnreadableDocument | RuntimeException e) {
            throw new UnreadableDocument("PyPI Simple page of '" + project + "': "
                    + NpmDocument.oneLine(e.getMessage()), e);
        }
    }

    private static FilteredDocument filtered(byte[] json, Registry registry, String project, Instant now,
                                             boolean html) throws IOException, UnreadableDocument {
        Map<String, Instant> uploaded = new HashMap<>();
        Map<String, Boolean> seen = new LinkedHashMap<>();
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new UnreadableDocument("expected a JSON object", null);
            }
            boolean sawFiles = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if (field.equals("files")) {
                    if (t != JsonToken.START_ARRAY) {
                        throw new UnreadableDocument("expected files as a list", null);
                    }
                    sawFiles = true;
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        String filename = null;
                        Instant at = null;
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String key = p.currentName();
                            JsonToken vt = p.nextToken();
                            if (key.equals("filename") && vt == JsonToken.VALUE_STRING) {
                                filename = p.getText();
                            } else if (key.equals("upload-time") && vt == JsonToken.VALUE_STRING) {
                                at = Timestamps.parse(p.getText());
                            } else {
                                p.skipChildren();
                            }
                        }
                        String version = filename == null ? null : dev.sallyport.policy.RegistryRequest.pypiVersion(filename);
                        if (version == null) {
                            throw new UnreadableDocument("a file without a distribution file name: " + filename, null);
                        }
                        seen.put(version, Boolean.TRUE);
                        if (at != null) {
                            uploaded.merge(version, at, (a, b) -> a.isBefore(b) ? a : b);
                        } else if (!uploaded.containsKey(version)) {
                            uploaded.put(version, Instant.MAX);        // marks "a file without a time"
                        }
                    }
                } else {
                    p.skipChildren();
                }
            }
            if (!sawFiles) {
                throw new UnreadableDocument("no files list", null);
            }
        }
        Map<String, String> verdicts = new HashMap<>();
        List<VersionVerdict> refused = new ArrayList<>();
        List<String> ordered = Ecosystem.PYPI.sorted(seen.keySet());
        for (String v : ordered) {
            Instant at = uploaded.get(v);
            String reason = registry.versionRefusal(project, v);
            if (reason == null) {
                reason = registry.ageRefusal(Instant.MAX.equals(at) ? null : at, now);
            }
            verdicts.put(v, reason == null ? "" : reason);
            if (reason != null) {
                refused.add(new VersionVerdict(v, reason));
            }
        }
        List<FileEntry> kept = new ArrayList<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream(json.length);
        try (JsonParser p = JSON.createParser(json); JsonGenerator g = JSON.createGenerator(out)) {
            p.nextToken();
            g.writeStartObject();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                g.writeFieldName(field);
                if (field.equals("files")) {
                    g.writeStartArray();
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        ByteArrayOutputStream one = new ByteArrayOutputStream();
                        FileEntry entry;
                        try (JsonGenerator fg = JSON.createGenerator(one)) {
                            entry = copyFile(p, fg, registry, project, verdicts);
                        }
                        g.writeRawValue(one.toString(StandardCharsets.UTF_8));
                        kept.add(entry);
                    }
                    g.writeEndArray();
                } else {
                    g.copyCurrentStructure(p);
                }
            }
            g.writeEndObject();
        }
        byte[] body = html ? html(project, kept) : out.toByteArray();
        return new FilteredDocument(body, body.length, html ? HTML_TYPE : JSON_TYPE, refused, verdicts);
    }

    /**
     * Copies one file object and notes what the HTML form needs of it; a file of a refused version is written
     * yanked, with the refusal as the reason.
     */
    private static FileEntry copyFile(JsonParser p, JsonGenerator g, Registry registry, String project,
                                      Map<String, String> verdicts) throws IOException {
        g.writeStartObject();
        String filename = null;
        String url = null;
        String sha256 = null;
        String requires = null;
        String yanked = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken t = p.nextToken();
            if (key.equals("yanked")) {
                yanked = t == JsonToken.VALUE_STRING ? p.getText() : t == JsonToken.VALUE_TRUE ? "" : null;
                p.skipChildren();
                continue;
            }
            g.writeFieldName(key);
            switch (key) {
                case "filename" -> filename = p.getText();
                case "url" -> url = p.getText();
                case "requires-python" -> requires = t == JsonToken.VALUE_STRING ? p.getText() : null;
                case "hashes" -> {
                    if (t == JsonToken.START_OBJECT) {
                        g.writeStartObject();
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String algo = p.currentName();
                            p.nextToken();
                            if (algo.equals("sha256")) {
                                sha256 = p.getText();
                            }
                            g.writeFieldName(algo);
                            g.copyCurrentStructure(p);
                        }
                        g.writeEndObject();
                        continue;
                    }
                }
                default -> { }
            }
            g.copyCurrentStructure(p);
        }
        String version = filename == null ? null : dev.sallyport.policy.RegistryRequest.pypiVersion(filename);
        String reason = version == null ? null : verdicts.get(version);
        if (reason != null && !reason.isEmpty()) {
            yanked = Refusals.message(registry, project, version, reason);
        }
        if (yanked != null) {
            g.writeFieldName("yanked");
            if (yanked.isEmpty()) {
                g.writeBoolean(true);
            } else {
                g.writeString(yanked);
            }
        }
        g.writeEndObject();
        return new FileEntry(filename, url, sha256, requires, yanked, version);
    }

    private static byte[] html(String project, List<FileEntry> files) {
        StringBuilder b = new StringBuilder(256 + files.size() * 200);
        b.append("<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.1\">\n<title>Links for ")
                .append(escape(project)).append("</title>\n</head>\n<body>\n<h1>Links for ").append(escape(project))
                .append("</h1>\n");
        for (FileEntry f : files) {
            b.append("<a href=\"").append(escape(f.url() + (f.sha256() == null ? "" : "#sha256=" + f.sha256())))
                    .append('"');
            if (f.requiresPython() != null) {
                b.append(" data-requires-python=\"").append(escape(f.requiresPython())).append('"');
            }
            if (f.yanked() != null) {
                b.append(" data-yanked=\"").append(escape(f.yanked())).append('"');
            }
            b.append('>').append(escape(f.filename())).append("</a><br/>\n");
        }
        b.append("</body>\n</html>\n");
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

}
