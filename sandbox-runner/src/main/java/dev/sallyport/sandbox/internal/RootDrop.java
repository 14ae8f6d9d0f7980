package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.SandboxException;
import dev.sallyport.sandbox.SandboxSpec;
import dev.sallyport.sandbox.net.Executables;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * What a root runner prepares so that bwrap, and so the command, runs as the {@link WorkloadUser.Dropped} uid:
 * bwrap is started through {@code setpriv} (util-linux) with that uid and gid and no supplementary groups; the
 * runtime folder becomes that user's; the workspace, the writable grants and the package caches are shown through
 * {@link HostMount}s (their owner mapped to the command's uid) when that uid does not own them or cannot
 * reach them; this module's classes are copied into the runtime folder when that uid cannot read them where they
 * are; a read-only grant, or the JDK, below folders that uid cannot pass is shown as it is
 * ({@link HostMount#plain}) from the runtime folder. The mounts are attached on the host only until bwrap has built the sandbox's mounts
 * ({@link #detachFromHost()}, called at the setup's hand-over), so a runner killed later leaves none behind.
 */
public final class RootDrop implements AutoCloseable {
    private final List<String> prefix;
    private final Map<Path, Path> sources;
    private final Path classes;
    private final List<HostMount> mounts;

    private RootDrop(List<String> prefix, Map<Path, Path> sources, Path classes, List<HostMount> mounts) {
        this.prefix = List.copyOf(prefix);
        this.sources = Map.copyOf(sources);
        this.classes = classes;
        this.mounts = List.copyOf(mounts);
    }

    /** Nothing to drop: a normal user's run. */
    public static RootDrop none(Path classes) {
        return new RootDrop(List.of(), Map.of(), classes, List.of());
    }

    /** Prepares the runtime folder {@code root} and the mounts for {@code user}; fails with one line if it cannot. */
    public static RootDrop prepare(SandboxSpec spec, WorkloadUser.Dropped user, Path root, Path classes,
                                   Path javaHome) throws SandboxException {
        String setpriv = Executables.find("setpriv").map(Path::toString).orElseThrow(() -> new SandboxException("started as root: "
                + "setpriv(1) not found, needed to run the command as uid " + user.uid() + " (expected: util-linux's "
                + "setpriv on PATH, e.g. apt-get install util-linux)"));
        List<HostMount> mounts = new ArrayList<>();
        try {
            // Before any mount is attached under it: the walk must never reach into a workspace.
            Optional<Path> cache = BwrapCommand.aotCacheOf(classes);
            boolean reached = WorkloadUser.reaches(classes, user.uid(), user.gid())
                    && (cache.isEmpty() || WorkloadUser.reaches(cache.get(), user.uid(), user.gid()));
            Path usable = reached ? classes : copyClasses(classes, cache, root);
            chown(root, user);
            Map<Path, Path> sources = new LinkedHashMap<>();
            List<Path> shown = new ArrayList<>(spec.readOnly());
            shown.add(javaHome);
            for (Path p : shown) {
                if (!WorkloadUser.passesTo(p, user.uid(), user.gid())) {
                    // Below folders that uid cannot pass: shown as it is, where bwrap can reach it.
                    Path at = root.resolve("shown-" + mounts.size());
                    mounts.add(HostMount.plain(p, at));
                    sources.put(p, at);
                }
            }
            List<Path> writable = new ArrayList<>(List.of(spec.workdir()));
            writable.addAll(spec.readWrite());
            spec.packageCaches().ifPresent(writable::add);
            for (Path folder : writable) {
                int owner = (int) Files.getAttribute(folder, "unix:uid");
                int group = (int) Files.getAttribute(folder, "unix:gid");
                if (owner != user.uid() || !WorkloadUser.reaches(folder, user.uid(), user.gid())) {
                    Path at = root.resolve("mapped-" + mounts.size());
                    try {
                        mounts.add(HostMount.idmapped(folder, at, owner, group, user.uid(), user.gid()));
                    } catch (IOException e) {
                        throw new SandboxException("started as root: cannot show " + folder + " to uid " + user.uid()
                                + " through an idmapped mount: " + e.getMessage() + " (expected: Linux 5.12+ and a file "
                                + "system that supports idmapped mounts; or run as a normal user, with sudo, or in a "
                                + "folder owned by the user that should run the command)", e);
                    }
                    sources.put(folder, at);
                }
            }
            return new RootDrop(prefix(setpriv, user), sources, usable, mounts);
        } catch (IOException e) {
            mounts.forEach(HostMount::close);
            throw new SandboxException("started as root: cannot prepare the run as uid " + user.uid() + ": "
                    + e.getMessage(), e);
        } catch (SandboxException e) {
            mounts.forEach(HostMount::close);
            throw e;
        }
    }

    /**
     * The {@link #prefix} that {@link #prepare} (or {@link #none}) will give {@code user}, known before anything is
     * prepared (what the launcher can do depends on it).
     */
    public static List<String> prefixFor(WorkloadUser user) {
        if (user instanceof WorkloadUser.Dropped dropped) {
            return Executables.find("setpriv").map(setpriv -> prefix(setpriv.toString(), dropped)).orElse(List.of());
        }
        return List.of();
    }

    private static List<String> prefix(String setpriv, WorkloadUser.Dropped user) {
        return List.of(setpriv, "--reuid=" + user.uid(), "--regid=" + user.gid(), "--clear-groups");
    }

    /** The command line before bwrap's: {@code setpriv ...} or nothing. */
    public List<String> prefix() {
        return prefix;
    }

    /** Host folders shown from another source (an idmapped mount), by the folder they stand for. */
    public Map<Path, Path> sources() {
        return sources;
    }

    /** This module's classes as the command's uid can read them. */
    public Path classes() {
        return classes;
    }

    /** Detaches the idmapped mounts from the host once the sandbox has its own copies. */
    public void detachFromHost() {
        mounts.forEach(HostMount::close);
    }

    @Override
    public void close() {
        detachFromHost();
    }

    /** True when {@code dir} is the root of a mount (a walk that deletes must not enter it). */
    public static boolean isMountRoot(Path dir) throws IOException {
        return MountPoints.isMountRoot(dir);
    }

    /**
     * Copies this module's {@code internal} package (all that {@link Inside} loads) into the runtime folder: a jar
     * with an ahead-of-time cache as it is, both with their times (the JVM checks the jar's against the cache's),
     * else the package's classes.
     */
    private static Path copyClasses(Path classes, Optional<Path> cache, Path root) throws IOException {
        Path target = root.resolve("classes");
        if (cache.isPresent()) {
            Files.createDirectories(target);
            Files.copy(cache.get(), target.resolve(cache.get().getFileName().toString()),
                    StandardCopyOption.COPY_ATTRIBUTES);
            return Files.copy(classes, target.resolve(classes.getFileName().toString()),
                    StandardCopyOption.COPY_ATTRIBUTES);
        }
        String pkg = Inside.class.getPackageName().replace('.', '/') + "/";
        if (Files.isDirectory(classes)) {
            Path from = classes.resolve(pkg);
            try (var files = Files.list(from)) {
                Files.createDirectories(target.resolve(pkg));
                for (Path f : files.toList()) {
                    Files.copy(f, target.resolve(pkg).resolve(f.getFileName().toString()));
                }
            }
            return target;
        }
        try (ZipFile jar = new ZipFile(classes.toFile())) {
            for (ZipEntry e : jar.stream().filter(e -> e.getName().startsWith(pkg) && !e.isDirectory()).toList()) {
                Path out = target.resolve(e.getName());
                Files.createDirectories(out.getParent());
                try (InputStream in = jar.getInputStream(e)) {
                    Files.copy(in, out);
                }
            }
        }
        return target;
    }

    /** Gives the runtime folder to the command's user (bwrap, running as that user, reads and mounts it). */
    private static void chown(Path root, WorkloadUser user) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (!dir.equals(root) && MountPoints.isMountRoot(dir)) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                own(dir);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                own(file);
                return FileVisitResult.CONTINUE;
            }

            private void own(Path p) throws IOException {
                Files.setAttribute(p, "unix:uid", user.uid(), java.nio.file.LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(p, "unix:gid", user.gid(), java.nio.file.LinkOption.NOFOLLOW_LINKS);
            }
        });
    }
}
