package dev.sallyport.sandbox;

import dev.sallyport.sandbox.internal.PackageCaches;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The checks of a scratch folder ({@link SandboxSpec#scratch()}): a host folder the command sees with its contents
 * and may write, every change thrown away after the run. It must be an existing folder, apart from the workspace
 * (neither it, in it, nor holding it), from the writable grants and from sallyport's own state (its keys and
 * tokens), not the root or a folder holding the home (the home inside is an empty tmpfs), and not in {@code /proc},
 * {@code /sys} or {@code /dev}. Links are resolved once here: the folder shown is the real one, checked as such, and
 * it is shown at the path given.
 */
public final class ScratchFolders {
    private static final List<Path> KERNEL_FOLDERS = List.of(Path.of("/proc"), Path.of("/sys"), Path.of("/dev"));

    /**
     * A checked scratch folder.
     *
     * @param source the real folder on the host (links resolved), what the sandbox is shown
     * @param target the path it is shown at inside (the path given, made absolute)
     */
    public record Checked(Path source, Path target) {
        public Checked {
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(target, "target");
            if (!source.isAbsolute() || !target.isAbsolute()) {
                throw new IllegalArgumentException("scratch: " + source + " at " + target + " (expected: absolute "
                        + "paths)");
            }
        }
    }

    private ScratchFolders() {
    }

    /**
     * Checks {@code path} as a scratch folder of a run in {@code workspace} by a user whose home is {@code hostHome}
     * and whose sallyport state folder is {@code stateDirectory} (which need not exist yet).
     *
     * @param field what the path came from, the start of the error ({@code --scratch}, {@code sandbox.scratch})
     * @throws IllegalArgumentException one line: {@code field path: what (expected: ...)}
     */
    public static Checked check(String field, Path path, Path workspace, Path hostHome, Path stateDirectory) {
        return check(field, path, workspace, hostHome, Map.of(stateDirectory, "sallyport's state folder"));
    }

    /** {@link #check(String, Path, Path, Path, Path)} with the folders to keep apart from, each with what it is. */
    static Checked check(String field, Path path, Path workspace, Path hostHome, Map<Path, String> apart) {
        Path target = path.toAbsolutePath().normalize();
        String at = field + " " + target + ": ";
        if (!Files.exists(target)) {
            throw new IllegalArgumentException(at + "does not exist (expected: an existing folder)");
        }
        if (!Files.isDirectory(target)) {
            throw new IllegalArgumentException(at + "is not a folder (expected: a folder; --allow-read shows a file)");
        }
        Path source;
        try {
            source = target.toRealPath();
        } catch (IOException e) {
            throw new IllegalArgumentException(at + "cannot resolve it: " + e.getClass().getSimpleName()
                    + " (expected: a folder the runner can reach)");
        }
        String shown = source.equals(target) ? at : at + "(the link to " + source + ") ";
        for (Path p : List.of(target, source)) {
            if (p.getNameCount() == 0) {
                throw new IllegalArgumentException(shown + "is the root folder (expected: one folder of the host)");
            }
            for (Path kernel : KERNEL_FOLDERS) {
                if (p.startsWith(kernel)) {
                    throw new IllegalArgumentException(shown + "lies in " + kernel + " (expected: a folder of files, "
                            + "not of a kernel file system)");
                }
            }
            if (WritableFolders.real(hostHome).startsWith(p) || hostHome.toAbsolutePath().normalize().startsWith(p)) {
                throw new IllegalArgumentException(shown + "holds the home folder " + hostHome + " (expected: a "
                        + "folder in the home or elsewhere; the home inside is an empty tmpfs)");
            }
        }
        Map<Path, String> all = new LinkedHashMap<>();
        all.put(workspace, "the workspace");
        all.putAll(apart);
        for (Map.Entry<Path, String> e : all.entrySet()) {
            overlap(target, source, e.getKey(), e.getValue()).ifPresent(how -> {
                throw new IllegalArgumentException(shown + how + " (expected: a folder apart from the workspace, the "
                        + "writable grants and sallyport's own folders)");
            });
        }
        return new Checked(source, target);
    }

    /**
     * The spec's scratch folders, checked: the path shown inside to the real host folder.
     * Apart from the workspace, the writable grants and the runner's own folders (package caches, start-up cache).
     */
    static Map<Path, Path> forRun(SandboxSpec spec) throws SandboxException {
        Map<Path, String> apart = new LinkedHashMap<>();
        spec.readWrite().forEach(p -> apart.put(p, "the --allow-write folder"));
        spec.packageCaches().ifPresent(p -> apart.put(p, "the package cache folder"));
        if (spec.packageCaches().isPresent()) {
            PackageCaches.LOCATIONS.values().forEach(l -> apart.put(spec.hostHome().resolve(l), "the package cache"));
        }
        spec.startupCache().ifPresent(p -> apart.put(p, "sallyport's start-up cache"));
        Map<Path, Path> checked = new LinkedHashMap<>();
        for (Path p : spec.scratch()) {
            try {
                Checked c = check("scratch", p, spec.workdir(), spec.hostHome(), apart);
                if (checked.putIfAbsent(c.target(), c.source()) != null) {
                    continue;   // named twice
                }
                for (Map.Entry<Path, Path> other : checked.entrySet()) {
                    if (!other.getKey().equals(c.target()) && (other.getValue().startsWith(c.source())
                            || c.source().startsWith(other.getValue()))) {
                        throw new SandboxException("scratch " + c.target() + ": overlaps the scratch folder "
                                + other.getKey() + " (expected: scratch folders apart from each other)");
                    }
                }
            } catch (IllegalArgumentException e) {
                throw new SandboxException(e.getMessage(), e);
            }
        }
        return checked;
    }

    /**
     * {@code sockets} (host paths) where the sandbox sees them: one in the real folder of a scratch folder reached
     * through a link is at the path the scratch folder is shown at.
     */
    static List<Path> shownAt(List<Path> sockets, Map<Path, Path> scratch) {
        List<Path> out = new ArrayList<>();
        for (Path socket : sockets) {
            Path at = socket;
            for (Map.Entry<Path, Path> s : scratch.entrySet()) {
                if (socket.startsWith(s.getValue()) && !s.getKey().equals(s.getValue())) {
                    at = s.getKey().resolve(s.getValue().relativize(socket).toString());
                }
            }
            out.add(at);
        }
        return List.copyOf(out);
    }

    /** How the scratch folder (at {@code target}, really {@code source}) overlaps {@code other}, if it does. */
    private static Optional<String> overlap(Path target, Path source, Path other, String what) {
        List<Path> others = List.of(other.toAbsolutePath().normalize(), WritableFolders.real(other));
        for (Path p : List.of(target, source)) {
            for (Path o : others) {
                if (p.equals(o)) {
                    return Optional.of("is " + what + " " + other);
                }
                if (p.startsWith(o)) {
                    return Optional.of("lies in " + what + " " + other);
                }
                if (o.startsWith(p)) {
                    return Optional.of("holds " + what + " " + other);
                }
            }
        }
        return Optional.empty();
    }
}
