package dev.sallyport.proxy.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.Advisories;
import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.PackageRule;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.RegistryReasons;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** npm package documents filtered by a registry's rules, in both forms, and the memory a large one takes. */
class NpmDocumentTest {

    static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

    static Registry registry(Duration age, boolean scripts, boolean provenance, List<String> deny) {
        return new Registry("npm", 1, Ecosystem.NPM, List.of("registry.example.test"), List.of(), Set.of(443), age,
                null, Advisories.NONE, List.of(), deny.stream().map(d -> PackageRule.parse(Ecosystem.NPM, d)).toList(),
                scripts, provenance, List.of(), Registry.DEFAULT_MAX_DOCUMENT_BYTES);
    }

    /** A document of {@code pkg}: 1.0.0 a month old, 1.1.0 (install script, no provenance) a week, 2.0.0 an hour. */
    static String document() {
        return """
                {"_id": "pkg", "name": "pkg", "readme": "long text",
                 "dist-tags": {"latest": "2.0.0", "stable": "1.1.0", "old": "1.0.0"},
                 "versions": {
                   "1.0.0": {"name": "pkg", "version": "1.0.0", "dependencies": {"a": "^1"},
                             "dist": {"tarball": "https://registry.example.test/pkg/-/pkg-1.0.0.tgz",
                                      "integrity": "sha512-x", "attestations": {"url": "u"}}, "readme": "r"},
                   "1.1.0": {"name": "pkg", "version": "1.1.0", "scripts": {"postinstall": "node x.js"},
                             "dist": {"tarball": "https://registry.example.test/pkg/-/pkg-1.1.0.tgz"}},
                   "2.0.0": {"name": "pkg", "version": "2.0.0",
                             "dist": {"tarball": "https://registry.example.test/pkg/-/pkg-2.0.0.tgz",
                                      "attestations": {"url": "u"}}}
                 },
                 "time": {"created": "2026-10-01T00:00:00.000Z", "modified": "2026-12-01T11:00:00.000Z",
                          "1.0.0": "2026-11-01T12:00:00.000Z", "1.1.0": "2026-11-24T12:00:00.000Z",
                          "2.0.0": "2026-12-01T11:00:00.000Z"}}
                """;
    }

    static String filter(Registry r, boolean abbreviated, List<VersionVerdict> refused) throws UnreadableDocument {
        FilteredDocument f = NpmDocument.filter(document().getBytes(StandardCharsets.UTF_8), r, "pkg", NOW,
                abbreviated);
        refused.addAll(f.refused());
        return f.text();
    }

    @Test
    void aVersionTooNewLeavesVersionsTimeAndTags() throws Exception {
        List<VersionVerdict> refused = new java.util.ArrayList<>();
        String out = filter(registry(Duration.ofDays(3), false, false, List.of()), false, refused);
        assertThat(refused).containsExactly(new VersionVerdict("2.0.0", RegistryReasons.RELEASE_TOO_NEW));
        assertThat(out).doesNotContain("\"2.0.0\"").doesNotContain("pkg-2.0.0.tgz")
                .contains("\"dist-tags\":{\"latest\":\"1.1.0\",\"stable\":\"1.1.0\",\"old\":\"1.0.0\"}")
                .contains("\"1.1.0\":\"2026-11-24T12:00:00.000Z\"").contains("\"created\"").contains("\"readme\"");
    }

    @Test
    void theAbbreviatedFormHasOnlyWhatInstallsNeed() throws Exception {
        List<VersionVerdict> refused = new java.util.ArrayList<>();
        String out = filter(registry(Duration.ofDays(3), false, false, List.of()), true, refused);
        assertThat(out).startsWith("{\"name\":\"pkg\"").doesNotContain("readme").doesNotContain("\"time\"")
                .doesNotContain("_id").doesNotContain("\"2.0.0\"")
                .contains("\"modified\":\"2026-12-01T11:00:00.000Z\"")
                .contains("\"1.1.0\":{\"name\":\"pkg\",\"version\":\"1.1.0\",\"dist\":{\"tarball\":"
                        + "\"https://registry.example.test/pkg/-/pkg-1.1.0.tgz\"},\"hasInstallScript\":true}")
                .contains("\"dependencies\":{\"a\":\"^1\"}");
    }

    @Test
    void addedInstallScriptsAndDroppedProvenanceAreRefused() throws Exception {
        List<VersionVerdict> refused = new java.util.ArrayList<>();
        String out = filter(registry(Duration.ZERO, true, true, List.of()), false, refused);
        assertThat(refused).containsExactly(new VersionVerdict("1.1.0", RegistryReasons.INSTALL_SCRIPT_ADDED));
        assertThat(out).contains("\"latest\":\"2.0.0\"").contains("\"stable\":\"1.0.0\"");
        refused.clear();
        filter(registry(Duration.ZERO, false, true, List.of()), false, refused);
        assertThat(refused).containsExactly(new VersionVerdict("1.1.0", RegistryReasons.PROVENANCE_DROPPED));
    }

    @Test
    void aTagWithNothingBelowItIsDropped() throws Exception {
        List<VersionVerdict> refused = new java.util.ArrayList<>();
        String out = filter(registry(Duration.ZERO, false, false, List.of("pkg@<=1.1.0")), false, refused);
        assertThat(out).contains("\"dist-tags\":{\"latest\":\"2.0.0\"}");
        assertThat(refused).extracting(VersionVerdict::reason).containsOnly(RegistryReasons.VERSION_NOT_ALLOWED);
    }

    @Test
    void whatIsNotAPackageDocumentIsRefused() {
        Registry r = registry(Duration.ofDays(1), false, false, List.of());
        for (String bad : List.of("", "[]", "{\"name\":\"pkg\"}", "{\"versions\": []}", "{\"versions\":{}} x",
                "{\"versions\":{\"1.0.0\": 5}}", "<html>")) {
            assertThatThrownBy(() -> NpmDocument.filter(bad.getBytes(StandardCharsets.UTF_8), r, "pkg", NOW, false))
                    .as(bad).isInstanceOf(UnreadableDocument.class).hasMessageStartingWith("npm package document of 'pkg': ");
        }
    }

    /**
     * A 20 MiB document (4,200 versions of 5 KB each) is filtered with at most twice its size allocated in all
     * (the answer, the parser's buffers, a few objects per version): the bound {@code benchmarks/README.md} states.
     */
    @Test
    void aTwentyMebibyteDocumentStaysWithinItsBound() throws Exception {
        StringBuilder b = new StringBuilder("{\"name\":\"big\",\"dist-tags\":{\"latest\":\"1.4199.0\"},\"versions\":{");
        StringBuilder time = new StringBuilder();
        String filler = "x".repeat(5000);
        for (int i = 0; i < 4200; i++) {
            String v = "1." + i + ".0";
            b.append(i == 0 ? "" : ",").append('"').append(v).append("\":{\"name\":\"big\",\"version\":\"").append(v)
                    .append("\",\"description\":\"").append(filler).append("\",\"dist\":{\"tarball\":\"t\"}}");
            time.append(",\"").append(v).append("\":\"").append(NOW.minus(Duration.ofHours(4200 - i))).append('"');
        }
        b.append("},\"time\":{\"created\":\"2020-01-01T00:00:00Z\"").append(time).append("}}");
        byte[] doc = b.toString().getBytes(StandardCharsets.UTF_8);
        assertThat(doc.length).isGreaterThan(20 << 20);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Registry r = registry(Duration.ofDays(7), false, false, List.of());
        NpmDocument.filter(doc, r, "big", NOW, false);     // warm up: class loading is not the filter's
        long before = threads.getCurrentThreadAllocatedBytes();
        long started = System.nanoTime();
        FilteredDocument f = NpmDocument.filter(doc, r, "big", NOW, false);
        long took = (System.nanoTime() - started) / 1_000_000;
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(f.refused()).hasSize(7 * 24 - 1);
        assertThat(f.text().substring(0, 200)).contains("\"latest\":\"1.4032.0\"");
        assertThat(allocated).as("bytes allocated filtering %d bytes in %d ms", doc.length, took)
                .isLessThan(2L * doc.length);
        System.out.printf("npm document of %d bytes filtered in %d ms, %d bytes allocated (%.2fx)%n", doc.length,
                took, allocated, (double) allocated / doc.length);
    }
}
