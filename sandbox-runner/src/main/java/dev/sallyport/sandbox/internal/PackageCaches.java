package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SequencedMap;

/**
 * One workspace's package caches, kept between its runs: a folder under the state directory
 * ({@code caches/NAME-HASH}, NAME the workspace's folder name, HASH from its real path), never inside the workspace,
 * never shared with another workspace. Each package manager's cache is a subfolder of it, shown writable where the
 * manager looks in the home folder ({@link #LOCATIONS}).
 */
public final class PackageCaches {
    /** Subfolder on the host to its place in the home folder inside. */
    public static final SequencedMap<String, String> LOCATIONS = locations();

    private PackageCaches() {
    }

    private static SequencedMap<String, String> locations() {
        SequencedMap<String, String> m = new LinkedHashMap<>();
        m.put("m2-repository", ".m2/repository");
        m.put("npm", ".npm");
        m.put("pip", ".cache/pip");
        m.put("go-build", ".cache/go-build");
        m.put("go-mod", "go/pkg/mod");
        m.put("cargo-registry", ".cargo/registry");
        m.put("gradle-caches", ".gradle/caches");
        return java.util.Collections.unmodifiableSequencedMap(m);
    }

    /** {@code stateDirectory/caches/NAME-HASH} for {@code workspace} (its real path when it has one). */
    public static Path folder(Path stateDirectory, Path workspace) {
        Path real;
        try {
            real = workspace.toRealPath();
        } catch (IOException e) {
            real = workspace.toAbsolutePath().normalize();
        }
        String name = real.getFileName() == null ? "root" : real.getFileName().toString()
                .replaceAll("[^A-Za-z0-9._-]", "_");
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(real.toString().getBytes(StandardCharsets.UTF_8));
            return stateDirectory.toAbsolutePath().normalize().resolve("caches")
                    .resolve(name + "-" + HexFormat.of().formatHex(hash, 0, 8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256: not available", e);
        }
    }

    /** Creates the folder and its subfolders (the {@code caches} folder owner-only) and returns each by location. */
    public static Map<String, Path> create(Path folder) throws IOException {
        Path caches = folder.getParent();
        if (!Files.isDirectory(caches)) {
            Files.createDirectories(caches,
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        Map<String, Path> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : LOCATIONS.entrySet()) {
            out.put(e.getValue(), Files.createDirectories(folder.resolve(e.getKey())));
        }
        return out;
    }
}
