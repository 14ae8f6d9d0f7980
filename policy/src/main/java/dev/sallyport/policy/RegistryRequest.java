package dev.sallyport.policy;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * What a request to a registry's host asks for, read from its path: a package document (npm {@code /<name>},
 * {@code /@scope%2Fname}, {@code /@scope/name}; PyPI {@code /simple/<project>/}), a file of one version (npm
 * {@code /<name>/-/<base>-<version>.tgz}; a PyPI wheel or sdist anywhere on the registry's hosts), or something
 * else (searches, the registry's own API), which passes unfiltered.
 */
public sealed interface RegistryRequest {

    /** A package document. */
    record Document(String packageName) implements RegistryRequest {}

    /** A file of one version. */
    record File(String packageName, String version) implements RegistryRequest {}

    /**
     * What looks like a file (an npm {@code .tgz}) but does not read as one of a version: refused, since its
     * version cannot be judged.
     */
    record UnreadableFile(String packageName) implements RegistryRequest {}

    /** Anything else. */
    record Other() implements RegistryRequest {}

    /** Reads {@code originForm} (path and query as sent) for {@code registry}. */
    public static RegistryRequest of(Registry registry, String originForm, boolean documentHost) {
        int q = originForm.indexOf('?');
        String path = q < 0 ? originForm : originForm.substring(0, q);
        String decoded;
        try {
            decoded = URLDecoder.decode(path.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return new Other();
        }
        return registry.ecosystem() == Ecosystem.NPM ? npm(decoded, documentHost) : pypi(decoded, documentHost);
    }

    private static RegistryRequest npm(String path, boolean documentHost) {
        String[] seg = path.substring(1).split("/", -1);
        boolean scoped = seg.length > 0 && seg[0].startsWith("@");
        int nameSegments = scoped ? 2 : 1;
        if (seg.length < nameSegments || seg[0].isEmpty() || seg[0].equals("-") || seg[0].startsWith("-")) {
            return new Other();
        }
        String name = scoped ? seg[0] + "/" + seg[1] : seg[0];
        boolean trailingSlash = seg.length == nameSegments + 1 && seg[nameSegments].isEmpty();
        if ((seg.length == nameSegments || trailingSlash) && documentHost) {
            return new Document(name);
        }
        if (seg.length == nameSegments + 2 && seg[nameSegments].equals("-") && seg[nameSegments + 1].endsWith(".tgz")) {
            String base = scoped ? seg[1] : seg[0];
            String file = seg[nameSegments + 1];
            String stem = file.substring(0, file.length() - 4);
            if (stem.startsWith(base + "-") && stem.length() > base.length() + 1) {
                return new File(name, stem.substring(base.length() + 1));
            }
        }
        return path.endsWith(".tgz") ? new UnreadableFile(name) : new Other();
    }

    private static RegistryRequest pypi(String path, boolean documentHost) {
        String[] seg = path.substring(1).split("/", -1);
        if (documentHost && seg.length >= 2 && seg.length <= 3 && seg[0].equals("simple") && !seg[1].isEmpty()
                && (seg.length == 2 || seg[2].isEmpty())) {
            return new Document(Ecosystem.PYPI.normalize(seg[1]));
        }
        String file = seg[seg.length - 1];
        String version = distributionVersion(file);
        String project = distributionProject(file);
        return version == null || project == null ? new Other() : new File(project, version);
    }

    /** The version a distribution file name carries ({@code name-1.0-py3-none-any.whl}, {@code name-1.0.tar.gz}). */
    static String distributionVersion(String filename) {
        String base = distributionBase(filename);
        if (base == null) {
            return null;
        }
        if (filename.endsWith(".whl")) {
            String[] parts = base.split("-");
            return parts.length >= 5 ? parts[1] : null;
        }
        int dash = base.lastIndexOf('-');
        return dash > 0 && dash < base.length() - 1 && Character.isDigit(base.charAt(dash + 1))
                ? base.substring(dash + 1) : null;
    }

    /** The project a distribution file name carries, normalized (PEP 503). */
    static String distributionProject(String filename) {
        String base = distributionBase(filename);
        String version = distributionVersion(filename);
        if (base == null || version == null) {
            return null;
        }
        String name = filename.endsWith(".whl") ? base.substring(0, base.indexOf('-'))
                : base.substring(0, base.length() - version.length() - 1);
        return Ecosystem.PYPI.normalize(name);
    }

    /** The file name without its distribution extension, or null when it is not a distribution file. */
    private static String distributionBase(String filename) {
        for (String ext : new String[] {".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz"}) {
            if (filename.endsWith(ext) && filename.length() > ext.length()) {
                return filename.substring(0, filename.length() - ext.length());
            }
        }
        return null;
    }

    /** The version of a PyPI distribution file name, or null when it names none. */
    public static String pypiVersion(String filename) {
        return distributionVersion(filename);
    }
}
