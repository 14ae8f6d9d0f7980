package dev.sallyport.proxy.registry;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.RegistryReasons;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Filters an npm package document (the full form, {@code GET /<name>} with {@code Accept: application/json}) by a
 * registry's rules and answers in the form the client asked for: full, or abbreviated
 * ({@code application/vnd.npm.install-v1+json}, which has no publish times, so the full one is always what is read).
 *
 * <p>Two passes over the bytes with Jackson's streaming parser, no tree: the first reads only what decides (the
 * version keys, {@code time}, {@code dist-tags}, and per version whether it has install scripts and provenance
 * attestations), the second copies the document token by token, leaving out the refused versions from
 * {@code versions} and {@code time} and pointing each {@code dist-tags} entry at a kept version. Memory: the
 * document, the answer (at most as large) and a few objects per version.
 */
public final class NpmDocument {

    /** npm's abbreviated document ("corgi"). */
    public static final String ABBREVIATED = "application/vnd.npm.install-v1+json";
    private static final Set<String> INSTALL_SCRIPTS = Set.of("preinstall", "install", "postinstall");
    /** The fields of a version in the abbreviated form. */
    private static final Set<String> ABBREVIATED_FIELDS = Set.of("name", "version", "dependencies",
            "optionalDependencies", "devDependencies", "bundleDependencies", "bundledDependencies", "peerDependencies",
            "peerDependenciesMeta", "acceptDependencies", "bin", "directories", "dist", "engines", "os", "cpu",
            "_hasShrinkwrap", "hasInstallScript", "deprecated", "funding", "license");
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(64 << 20).maxNestingDepth(200)
                    .build())
            .build();

    /** What the first pass learns of one version. */
    private record Facts(boolean installScript, boolean provenance) {}

    private NpmDocument() {}

    /**
     * Filters {@code document}; throws {@link UnreadableDocument} when it is not an npm package document (the
     * caller refuses it: never passed on unfiltered).
     */
    public static FilteredDocument filter(byte[] document, Registry registry, String packageName, Instant now,
                                          boolean abbreviated) throws UnreadableDocument {
        try {
            return filtered(document, registry, packageName, now, abbreviated);
        } catch (IOException | UnreadableDocument | RuntimeException e) {
            throw new UnreadableDocument("npm package document of '" + packageName + "': " + oneLine(e.getMessage()),
                    e);
        }
    }

    private static FilteredDocument filtered(byte[] document, Registry registry, String packageName, Instant now,
                                             boolean abbreviated) throws IOException, UnreadableDocument {
        Map<String, Facts> facts = new LinkedHashMap<>();
        Map<String, Instant> times = new HashMap<>();
        Map<String, String> tags = new LinkedHashMap<>();
        String modified = firstPass(document, facts, times, tags);
        List<String> ordered = Ecosystem.NPM.sorted(facts.keySet());
        Map<String, String> verdicts = new HashMap<>();
        List<VersionVerdict> refused = new ArrayList<>();
        boolean checks = !registry.excepted(packageName);
        boolean allProvenance = true;
        for (int i = 0; i < ordered.size(); i++) {
            String v = ordered.get(i);
            Facts f = facts.get(v);
            String reason = registry.versionRefusal(packageName, v);
            if (reason == null) {
                reason = registry.ageRefusal(times.get(v), now);
            }
            if (reason == null && checks && registry.installScripts() && i > 0 && f.installScript()
                    && !facts.get(ordered.get(i - 1)).installScript()) {
                reason = RegistryReasons.INSTALL_SCRIPT_ADDED;
            }
            if (reason == null && checks && registry.provenance() && i > 0 && allProvenance && !f.provenance()) {
                reason = RegistryReasons.PROVENANCE_DROPPED;
            }
            allProvenance &= f.provenance();
            verdicts.put(v, reason == null ? "" : reason);
            if (reason != null) {
                refused.add(new VersionVerdict(v, reason));
            }
        }
        Map<String, String> newTags = retag(tags, verdicts, ordered);
        JsonCopy.Output out = new JsonCopy.Output(abbreviated ? document.length / 4 : document.length);
        try (JsonParser p = JSON.createParser(document); JsonGenerator g = JSON.createGenerator(out)) {
            secondPass(p, g, document, out, verdicts, newTags, facts, abbreviated, modified);
        }
        return new FilteredDocument(out.array(), out.size(), abbreviated ? ABBREVIATED : "application/json", refused,
                verdicts);
    }

    /** Reads the deciding facts; returns {@code time.modified} (nullable). */
    private static String firstPass(byte[] document, Map<String, Facts> facts, Map<String, Instant> times,
                                    Map<String, String> tags) throws IOException, UnreadableDocument {
        String modified = null;
        boolean sawVersions = false;
        try (JsonParser p = JSON.createParser(document)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, "a JSON object");
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "versions" -> {
                        sawVersions = true;
                        expect(t, JsonToken.START_OBJECT, "versions as an object");
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String version = p.currentName();
                            expect(p.nextToken(), JsonToken.START_OBJECT, "versions['" + version + "'] as an object");
                            facts.put(version, versionFacts(p));
                        }
                    }
                    case "time" -> {
                        expect(t, JsonToken.START_OBJECT, "time as an object");
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String key = p.currentName();
                            JsonToken vt = p.nextToken();
                            if (vt == JsonToken.VALUE_STRING) {
                                if (key.equals("modified")) {
                                    modified = p.getText();
                                }
                                Instant at = Timestamps.parse(p.getText());
                                if (at != null) {
                                    times.put(key, at);
                                }
                            } else {
                                p.skipChildren();
                            }
                        }
                    }
                    case "dist-tags" -> {
                        expect(t, JsonToken.START_OBJECT, "dist-tags as an object");
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String tag = p.currentName();
                            if (p.nextToken() == JsonToken.VALUE_STRING) {
                                tags.put(tag, p.getText());
                            } else {
                                p.skipChildren();
                            }
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            expect(p.currentToken(), JsonToken.END_OBJECT, "the end of the document");
            if (p.nextToken() != null) {
                throw new UnreadableDocument("text after the document", null);
            }
        }
        if (!sawVersions) {
            throw new UnreadableDocument("no versions object", null);
        }
        return modified;
    }

    private static Facts versionFacts(JsonParser p) throws IOException {
        boolean scripts = false;
        boolean provenance = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            if (field.equals("hasInstallScript")) {
                scripts |= t == JsonToken.VALUE_TRUE;
            } else if (field.equals("scripts") && t == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    scripts |= INSTALL_SCRIPTS.contains(p.currentName());
                    p.nextToken();
                    p.skipChildren();
                }
            } else if (field.equals("dist") && t == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String key = p.currentName();
                    JsonToken vt = p.nextToken();
                    provenance |= key.equals("attestations") && vt == JsonToken.START_OBJECT;
                    p.skipChildren();
                }
            } else {
                p.skipChildren();
            }
        }
        return new Facts(scripts, provenance);
    }

    /**
     * Each tag on a kept version stays; one on a refused version moves to the newest kept version below it (a
     * release, unless the tag named a pre-release), or is dropped when there is none.
     */
    private static Map<String, String> retag(Map<String, String> tags, Map<String, String> verdicts,
                                             List<String> ordered) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> tag : tags.entrySet()) {
            String v = tag.getValue();
            if ("".equals(verdicts.get(v))) {
                out.put(tag.getKey(), v);
                continue;
            }
            boolean pre = Ecosystem.NPM.prerelease(v);
            for (int i = ordered.size() - 1; i >= 0; i--) {
                String candidate = ordered.get(i);
                if (verdicts.get(candidate).isEmpty() && Ecosystem.NPM.compare(candidate, v) < 0
                        && (pre || !Ecosystem.NPM.prerelease(candidate))) {
                    out.put(tag.getKey(), candidate);
                    break;
                }
            }
        }
        return out;
    }

    private static void secondPass(JsonParser p, JsonGenerator g, byte[] source, JsonCopy.Output out,
                                   Map<String, String> verdicts, Map<String, String> tags, Map<String, Facts> facts,
                                   boolean abbreviated, String modified) throws IOException {
        p.nextToken();
        g.writeStartObject();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            switch (field) {
                case "versions" -> {
                    g.writeFieldName("versions");
                    g.writeStartObject();
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String version = p.currentName();
                        p.nextToken();
                        if (!verdicts.get(version).isEmpty()) {
                            p.skipChildren();
                        } else if (abbreviated) {
                            g.writeFieldName(version);
                            abbreviatedVersion(p, g, facts.get(version));
                        } else {
                            g.writeFieldName(version);
                            JsonCopy.slice(p, g, source, out);
                        }
                    }
                    g.writeEndObject();
                }
                case "time" -> {
                    if (abbreviated) {
                        p.skipChildren();
                        if (modified != null) {
                            g.writeStringField("modified", modified);
                        }
                        continue;
                    }
                    g.writeFieldName("time");
                    g.writeStartObject();
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String key = p.currentName();
                        p.nextToken();
                        String verdict = verdicts.get(key);
                        if (verdict != null && !verdict.isEmpty()) {
                            p.skipChildren();
                        } else {
                            g.writeFieldName(key);
                            JsonCopy.value(p, g);
                        }
                    }
                    g.writeEndObject();
                }
                case "dist-tags" -> {
                    p.skipChildren();
                    g.writeFieldName("dist-tags");
                    g.writeStartObject();
                    for (Map.Entry<String, String> tag : tags.entrySet()) {
                        g.writeStringField(tag.getKey(), tag.getValue());
                    }
                    g.writeEndObject();
                }
                case "name" -> {
                    g.writeFieldName(field);
                    JsonCopy.value(p, g);
                }
                default -> {
                    if (abbreviated) {
                        p.skipChildren();
                    } else {
                        g.writeFieldName(field);
                        JsonCopy.slice(p, g, source, out);
                    }
                }
            }
        }
        g.writeEndObject();
    }

    private static void abbreviatedVersion(JsonParser p, JsonGenerator g, Facts facts) throws IOException {
        g.writeStartObject();
        boolean wroteScripts = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            if (ABBREVIATED_FIELDS.contains(field)) {
                wroteScripts |= field.equals("hasInstallScript");
                g.writeFieldName(field);
                JsonCopy.value(p, g);
            } else {
                p.skipChildren();
            }
        }
        if (facts.installScript() && !wroteScripts) {
            g.writeBooleanField("hasInstallScript", true);
        }
        g.writeEndObject();
    }

    private static void expect(JsonToken got, JsonToken wanted, String what) throws UnreadableDocument {
        if (got != wanted) {
            throw new UnreadableDocument("expected " + what + ", found " + got, null);
        }
    }


    static String oneLine(String s) {
        return s == null ? "unreadable" : s.replaceAll("\\s+", " ").strip();
    }
}
