package dev.sallyport.policy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The OSV records of an {@code advisories} folder (the OSV schema: the OSV database's and OpenSSF's
 * malicious-packages format), read when the policy is loaded and so again on every reload. The proxy never
 * fetches them; the user syncs the folder. Each record's {@code affected} entries name a package of an ecosystem
 * and the versions it covers: a {@code versions} list, and {@code SEMVER} or {@code ECOSYSTEM} {@code ranges}
 * ({@code introduced} / {@code fixed} / {@code last_affected}; {@code introduced: "0"} is every version). Withdrawn
 * records are ignored; {@code GIT} ranges name commits, not versions, and are ignored too.
 */
public final class Advisories {

    /** No records. */
    public static final Advisories NONE = new Advisories(Map.of(), 0);

    /** A range's events in file order: introduced, fixed, last_affected. */
    private record Event(String kind, String version) {}

    /** One affected entry: its record's id, listed versions and ranges. */
    private record Affected(String id, Set<String> versions, List<List<Event>> ranges) {}

    private static final JsonFactory JSON = new JsonFactory();

    private final Map<String, List<Affected>> byPackage;
    private final int records;

    private Advisories(Map<String, List<Affected>> byPackage, int records) {
        this.byPackage = byPackage;
        this.records = records;
    }

    /** How many records were read. */
    public int records() {
        return records;
    }

    /**
     * Reads every {@code *.json} file under {@code folder} (at any depth). Throws with one line naming the file,
     * the place in it and what was expected, for the first file that is not an OSV record.
     */
    public static Advisories load(Path folder) throws IOException {
        if (!Files.isDirectory(folder)) {
            throw new IOException(folder + ": not a folder (expected: a folder of OSV JSON records)");
        }
        Map<String, List<Affected>> map = new HashMap<>();
        int count = 0;
        List<Path> files;
        try (Stream<Path> walk = Files.walk(folder)) {
            files = walk.filter(p -> p.getFileName().toString().endsWith(".json") && Files.isRegularFile(p))
                    .sorted().toList();
        }
        for (Path file : files) {
            Object tree;
            try (InputStream in = Files.newInputStream(file); JsonParser p = JSON.createParser(in)) {
                tree = value(p, p.nextToken());
                if (p.nextToken() != null) {
                    throw new IOException("text after the record at line " + p.currentLocation().getLineNr());
                }
            } catch (IOException e) {
                throw new IOException(file + ": " + oneLine(e.getMessage()) + " (expected: one OSV JSON record)", e);
            }
            try {
                if (add(tree, map)) {
                    count++;
                }
            } catch (IllegalArgumentException e) {
                throw new IOException(file + ": " + e.getMessage() + " (expected: an OSV record with id and affected)",
                        e);
            }
        }
        return new Advisories(Map.copyOf(map), count);
    }

    /**
     * The id of a record that names {@code version} of {@code name} (spelled as {@code ecosystem} spells it), or
     * null.
     */
    public String affecting(Ecosystem ecosystem, String name, String version) {
        List<Affected> list = byPackage.get(key(ecosystem, ecosystem.normalize(name)));
        if (list == null) {
            return null;
        }
        for (Affected a : list) {
            if (a.versions().contains(version)) {
                return a.id();
            }
            for (List<Event> range : a.ranges()) {
                if (inRange(ecosystem, range, version)) {
                    return a.id();
                }
            }
        }
        return null;
    }

    private static boolean inRange(Ecosystem ecosystem, List<Event> events, String version) {
        boolean affected = false;
        List<Event> sorted = new ArrayList<>(events);
        sorted.sort((x, y) -> x.version().equals("0") ? -1 : y.version().equals("0") ? 1
                : ecosystem.compare(x.version(), y.version()));
        for (Event e : sorted) {
            int cmp = e.version().equals("0") ? 1 : ecosystem.compare(version, e.version());
            switch (e.kind()) {
                case "introduced" -> affected = cmp >= 0 || affected;
                case "fixed" -> affected = affected && cmp < 0;
                case "last_affected" -> affected = affected && cmp <= 0;
                default -> { }
            }
            if (cmp < 0) {
                break;                         // later events are above the version
            }
        }
        return affected;
    }

    @SuppressWarnings("unchecked")
    private static boolean add(Object tree, Map<String, List<Affected>> map) {
        if (!(tree instanceof Map<?, ?> record)) {
            throw new IllegalArgumentException("not a JSON object");
        }
        if (!(record.get("id") instanceof String id) || id.isEmpty()) {
            throw new IllegalArgumentException("no id");
        }
        if (record.get("withdrawn") != null) {
            return false;
        }
        Object affected = record.get("affected");
        if (affected == null) {
            return true;
        }
        if (!(affected instanceof List<?> entries)) {
            throw new IllegalArgumentException("affected is not a list");
        }
        for (Object entry : entries) {
            Map<String, Object> e = entry instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
            Map<String, Object> pkg = e.get("package") instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
            Ecosystem eco = null;
            for (Ecosystem candidate : Ecosystem.values()) {
                if (candidate.osvName().equals(pkg.get("ecosystem"))) {
                    eco = candidate;
                }
            }
            if (eco == null || !(pkg.get("name") instanceof String name)) {
                continue;                      // another ecosystem's package: not ours to judge
            }
            Set<String> versions = new java.util.HashSet<>();
            if (e.get("versions") instanceof List<?> vs) {
                for (Object v : vs) {
                    if (v instanceof String s) {
                        versions.add(s);
                    }
                }
            }
            List<List<Event>> ranges = new ArrayList<>();
            if (e.get("ranges") instanceof List<?> rs) {
                for (Object r : rs) {
                    Map<String, Object> range = r instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
                    if ("GIT".equals(range.get("type")) || !(range.get("events") instanceof List<?> events)) {
                        continue;
                    }
                    List<Event> list = new ArrayList<>();
                    for (Object ev : events) {
                        if (ev instanceof Map<?, ?> m) {
                            for (Map.Entry<?, ?> kv : m.entrySet()) {
                                if (kv.getValue() instanceof String v) {
                                    list.add(new Event((String) kv.getKey(), v));
                                }
                            }
                        }
                    }
                    ranges.add(List.copyOf(list));
                }
            }
            map.computeIfAbsent(key(eco, eco.normalize(name)), k -> new ArrayList<>())
                    .add(new Affected(id, Set.copyOf(versions), List.copyOf(ranges)));
        }
        return true;
    }

    private static String key(Ecosystem ecosystem, String name) {
        return ecosystem.key() + ":" + name;
    }

    /** A JSON value as maps, lists, strings, numbers (as text), booleans and null. */
    private static Object value(JsonParser p, JsonToken t) throws IOException {
        if (t == null) {
            throw new IOException("empty file");
        }
        return switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String name = p.currentName();
                    m.putIfAbsent(name, value(p, p.nextToken()));
                }
                yield m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                for (JsonToken v = p.nextToken(); v != JsonToken.END_ARRAY; v = p.nextToken()) {
                    l.add(value(p, v));
                }
                yield l;
            }
            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> p.getText();
            case VALUE_TRUE -> true;
            case VALUE_FALSE -> false;
            case VALUE_NULL -> null;
            default -> throw new IOException("unexpected " + t + " at line " + p.currentLocation().getLineNr());
        };
    }

    private static String oneLine(String s) {
        return s == null ? "unreadable" : s.replaceAll("\\s+", " ").strip();
    }
}
