package dev.sallyport.policy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One entry of {@code registries:}: a package registry (or a mirror of one) the proxy sees as what it is. Its hosts
 * are reached through this entry alone (GET and HEAD; a plain rule that also allows one of them is a policy error),
 * its package documents are filtered and the files of refused versions are answered {@code 403}.
 *
 * @param hosts              where package documents are served (npm {@code GET /<name>}, PyPI {@code /simple/<name>/});
 *                           files too, unless {@code fileHosts} names other hosts
 * @param fileHosts          hosts that serve tarballs and wheels only (may be empty)
 * @param minReleaseAge      versions published more recently are filtered and their files refused; zero: no limit
 * @param advisoriesFolder   nullable: the {@code advisories} folder, read into {@code advisories}
 * @param allow              package rules: when not empty, only packages one of them names are allowed (and, for a
 *                           pinned rule, only versions in its range)
 * @param deny               package rules: a package (or, pinned, a range of its versions) that is refused
 * @param installScripts     npm: refuse a version with install scripts whose previous version had none
 * @param provenance         npm: refuse a version without provenance when every earlier version had it
 * @param exceptions         package rules the two npm checks do not apply to
 * @param maxDocumentBytes   the largest package document the proxy reads whole to filter (bigger: refused)
 */
public record Registry(String name, int line, Ecosystem ecosystem, List<String> hosts, List<String> fileHosts,
                       Set<Integer> ports, Duration minReleaseAge, Path advisoriesFolder, Advisories advisories,
                       List<PackageRule> allow, List<PackageRule> deny, boolean installScripts, boolean provenance,
                       List<PackageRule> exceptions, long maxDocumentBytes) {

    /** The default of {@code max_document_bytes}: above the largest documents public registries serve today. */
    public static final long DEFAULT_MAX_DOCUMENT_BYTES = 64L << 20;

    public Registry {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(ecosystem, "ecosystem");
        Objects.requireNonNull(minReleaseAge, "minReleaseAge");
        Objects.requireNonNull(advisories, "advisories");
        hosts = List.copyOf(hosts);
        fileHosts = List.copyOf(fileHosts);
        ports = Set.copyOf(ports);
        allow = List.copyOf(allow);
        deny = List.copyOf(deny);
        exceptions = List.copyOf(exceptions);
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("registry '" + name + "': no hosts (expected: at least one)");
        }
        if (ports.isEmpty()) {
            throw new IllegalArgumentException("registry '" + name + "': ports empty (expected: at least one port)");
        }
        if (maxDocumentBytes < 1024) {
            throw new IllegalArgumentException("registry '" + name + "': max_document_bytes " + maxDocumentBytes
                    + " (expected: >= 1024)");
        }
    }

    /** Every host of the entry: document hosts, then file hosts. */
    public List<String> allHosts() {
        return java.util.stream.Stream.concat(hosts.stream(), fileHosts.stream()).distinct().toList();
    }

    /** {@code min_release_age} as a policy spells it: {@code 7d}, {@code 36h}, {@code 30m}, {@code 0s}. */
    public String minReleaseAgeText() {
        long s = minReleaseAge.toSeconds();
        return s % 86_400 == 0 && s > 0 ? s / 86_400 + "d" : s % 3600 == 0 && s > 0 ? s / 3600 + "h"
                : s % 60 == 0 && s > 0 ? s / 60 + "m" : s + "s";
    }

    /** The rule name decisions for this entry's hosts carry: {@code registry:NAME}. */
    public String ruleName() {
        return "registry:" + name;
    }

    /** Why the package as a whole is refused ({@link RegistryReasons#PACKAGE_NOT_ALLOWED}), or null. */
    public String packageRefusal(String packageName) {
        String n = ecosystem.normalize(packageName);
        for (PackageRule r : deny) {
            if (r.range() == null && r.matchesName(n)) {
                return RegistryReasons.PACKAGE_NOT_ALLOWED;
            }
        }
        if (!allow.isEmpty() && allow.stream().noneMatch(r -> r.matchesName(n))) {
            return RegistryReasons.PACKAGE_NOT_ALLOWED;
        }
        return null;
    }

    /**
     * Why one version is refused, from what its name and number alone say (lists, pinned ranges, advisories), or
     * null. The package as a whole is checked too.
     */
    public String versionRefusal(String packageName, String version) {
        String whole = packageRefusal(packageName);
        if (whole != null) {
            return whole;
        }
        String n = ecosystem.normalize(packageName);
        if (advisories.affecting(ecosystem, n, version) != null) {
            return RegistryReasons.KNOWN_MALICIOUS;
        }
        for (PackageRule r : deny) {
            if (r.range() != null && r.matches(ecosystem, n, version)) {
                return RegistryReasons.VERSION_NOT_ALLOWED;
            }
        }
        if (!allow.isEmpty() && allow.stream().noneMatch(r -> r.matches(ecosystem, n, version))) {
            return RegistryReasons.VERSION_NOT_ALLOWED;
        }
        return null;
    }

    /**
     * Why a version published at {@code published} (nullable: the document does not say) is refused at
     * {@code now}, or null: {@link RegistryReasons#RELEASE_TOO_NEW}, or {@link RegistryReasons#RELEASE_TIME_UNKNOWN}
     * when a minimum age is set and the time is not known.
     */
    public String ageRefusal(Instant published, Instant now) {
        if (minReleaseAge.isZero()) {
            return null;
        }
        if (published == null) {
            return RegistryReasons.RELEASE_TIME_UNKNOWN;
        }
        return published.isAfter(now.minus(minReleaseAge)) ? RegistryReasons.RELEASE_TOO_NEW : null;
    }

    /** True when the npm install-script and provenance checks skip this package. */
    public boolean excepted(String packageName) {
        String n = ecosystem.normalize(packageName);
        return exceptions.stream().anyMatch(r -> r.matchesName(n));
    }
}
