package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.BubblewrapProbe.Bubblewrap;
import dev.sallyport.sandbox.SandboxException;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * How the scratch folders ({@code SandboxSpec.scratch}) are shown: an overlay bwrap makes ({@code --overlay-src SRC
 * --tmp-overlay DEST}, bubblewrap 0.9+, where overlayfs works in a user namespace for the user bwrap runs as; tried
 * once per JVM and prefix), whose upper layer is a tmpfs that goes with the sandbox, for a folder the command's uid
 * owns and reaches (another's files would be read-only in it); else a copy in the run's runtime folder, the command's
 * (a root runner hands the runtime folder over), bound writable and removed with it. A copy holds at most the tmpfs size in all, keeps links as links (never
 * followed) and leaves out sockets, pipes and devices. Nothing the command writes reaches the host folder either way.
 */
public final class ScratchMounts {
    private static final Map<List<String>, Boolean> OVERLAY = new ConcurrentHashMap<>();

    /** How to show the scratch folders. */
    public enum Choice {
        /** An overlay where bwrap and the kernel make one for this user, else a copy. */
        OVERLAY_WHERE_IT_WORKS,
        /** Always a copy (tests use it to try the copy where the overlay works). */
        COPY
    }

    /** One scratch folder as the sandbox will show it at {@link #target()}. */
    public sealed interface Mount {
        Path target();
    }

    /** The host folder {@code source} as the lower layer of an overlay at {@code target}, its upper a tmpfs. */
    public record Overlay(Path source, Path target) implements Mount {}

    /** A copy of the host folder in the runtime folder ({@code copy}), bound writable at {@code target}. */
    public record Copied(Path copy, Path target) implements Mount {}

    private ScratchMounts() {
    }

    /**
     * The mounts of {@code folders} (the path shown inside to the real host folder) for the command's {@code user}:
     * overlays when {@code choice} allows and they work through {@code prefix} (a root runner's {@code setpriv}, else
     * empty) for folders that user owns and reaches, else copies into {@code runtime}, at most {@code budget} bytes of
     * files in all.
     */
    public static List<Mount> prepare(Bubblewrap bwrap, List<String> prefix, WorkloadUser user, Choice choice,
                                      Map<Path, Path> folders, Path runtime, long budget) throws SandboxException {
        if (folders.isEmpty()) {
            return List.of();
        }
        boolean overlay = choice == Choice.OVERLAY_WHERE_IT_WORKS && overlayWorks(bwrap, prefix, user);
        List<Mount> mounts = new ArrayList<>();
        long[] left = {budget};
        for (Map.Entry<Path, Path> f : folders.entrySet()) {
            Path source = f.getValue();
            if (overlay && owns(user, source)) {
                mounts.add(new Overlay(source, f.getKey()));
            } else {
                Path copy = runtime.resolve("scratch-" + mounts.size());
                copy(source, copy, left, budget, bwrap, user);
                mounts.add(new Copied(copy, f.getKey()));
            }
        }
        return List.copyOf(mounts);
    }

    private static boolean owns(WorkloadUser user, Path folder) {
        try {
            return (int) Files.getAttribute(folder, "unix:uid") == user.uid()
                    && WorkloadUser.reaches(folder, user.uid(), user.gid());
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Whether bwrap makes an overlay through {@code prefix}: bubblewrap 0.9 or newer, and overlayfs mounted in its user
     * namespace over a folder of {@code user}'s in the host's temporary folder, read and written (asked once per JVM
     * and prefix).
     */
    public static boolean overlayWorks(Bubblewrap bwrap, List<String> prefix, WorkloadUser user) {
        if (!bwrap.supportsOverlay()) {
            return false;
        }
        return OVERLAY.computeIfAbsent(List.copyOf(prefix), p -> tryOverlay(bwrap, p, user));
    }

    private static boolean tryOverlay(Bubblewrap bwrap, List<String> prefix, WorkloadUser user) {
        Path lower = null;
        try {
            lower = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "sallyport-overlay-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
            Files.writeString(lower.resolve("probe"), "lower\n");
            if (user instanceof WorkloadUser.Dropped) {
                for (Path p : List.of(lower, lower.resolve("probe"))) {
                    Files.setAttribute(p, "unix:uid", user.uid());
                    Files.setAttribute(p, "unix:gid", user.gid());
                }
            }
            List<String> argv = new ArrayList<>(prefix);
            argv.addAll(List.of(bwrap.path().toString(), "--unshare-user", "--die-with-parent", "--ro-bind", "/usr",
                    "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
                    "/lib64", "--overlay-src", lower.toString(), "--tmp-overlay", "/mnt", "--", "/bin/sh", "-c",
                    "read l < /mnt/probe && echo upper > /mnt/probe && echo new > /mnt/new && [ \"$l\" = lower ]"));
            Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0 && Files.readString(lower.resolve("probe")).equals("lower\n")
                    && !Files.exists(lower.resolve("new"));
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            if (lower != null) {
                try {
                    Files.deleteIfExists(lower.resolve("probe"));
                    Files.deleteIfExists(lower.resolve("new"));
                    Files.deleteIfExists(lower);
                } catch (IOException e) {
                    // left in the temporary folder: harmless
                }
            }
        }
    }

    /**
     * Copies the folder {@code source} to {@code copy} without following links: folders, files (with their modes and
     * times) and links; sockets, pipes and devices are left out, and so is what the command's {@code user} could not
     * read on the host (the runner may be root: the copy is handed to that user). Fails once {@code left[0]} bytes
     * are used up.
     */
    static void copy(Path source, Path copy, long[] left, long budget, Bubblewrap bwrap, WorkloadUser user)
            throws SandboxException {
        try {
            Files.walkFileTree(source, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    if (!dir.equals(source) && !readableBy(user, dir, true)) {
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    Files.createDirectory(copy.resolve(source.relativize(dir).toString()),
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Path to = copy.resolve(source.relativize(file).toString());
                    if (attrs.isSymbolicLink()) {
                        Files.createSymbolicLink(to, Files.readSymbolicLink(file));
                    } else if (attrs.isRegularFile() && readableBy(user, file, false)) {
                        left[0] -= attrs.size();
                        if (left[0] < 0) {
                            throw new TooBig();
                        }
                        Files.copy(file, to, LinkOption.NOFOLLOW_LINKS);
                        keepModeAndTime(file, to);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    if (exc != null) {
                        throw exc;
                    }
                    Path to = copy.resolve(source.relativize(dir).toString());
                    keepModeAndTime(dir, to);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (TooBig e) {
            throw new SandboxException("scratch " + source + ": more than " + budget + " bytes to copy (expected: at "
                    + "most the tmpfs size, --tmpfs-size, in all scratch folders; bwrap " + bwrap.version() + " cannot "
                    + "overlay them here, bubblewrap 0.9+ with overlayfs in user namespaces can)", e);
        } catch (IOException e) {
            throw new SandboxException("scratch " + source + ": cannot copy it: " + e.getClass().getSimpleName() + " "
                    + e.getMessage() + " (expected: a folder whose files the runner can read)", e);
        }
    }

    /**
     * Whether {@code user} could read {@code path} on the host (and list it, for a folder) by its owner, group and
     * mode; supplementary groups are not counted, so a file only they open is left out. Any user the runner runs
     * as itself reads what the runner reads.
     */
    static boolean readableBy(WorkloadUser user, Path path, boolean folder) throws IOException {
        if (!(user instanceof WorkloadUser.Dropped)) {
            return true;
        }
        int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        int uid = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int gid = (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        int shift = uid == user.uid() ? 6 : gid == user.gid() ? 3 : 0;
        int need = folder ? 05 : 04;
        return ((mode >> shift) & need) == need;
    }

    /** The mode (the owner keeps write access to folders, so a copy can be filled and removed) and time. */
    private static void keepModeAndTime(Path from, Path to) throws IOException {
        var mode = Files.getPosixFilePermissions(from, LinkOption.NOFOLLOW_LINKS);
        if (Files.isDirectory(to, LinkOption.NOFOLLOW_LINKS)) {
            mode.add(java.nio.file.attribute.PosixFilePermission.OWNER_READ);
            mode.add(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
            mode.add(java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE);
        }
        Files.setPosixFilePermissions(to, mode);
        Files.setLastModifiedTime(to, Files.getLastModifiedTime(from, LinkOption.NOFOLLOW_LINKS));
    }

    /** The copy went past its budget. */
    private static final class TooBig extends IOException {
        private static final long serialVersionUID = 1L;

        TooBig() {
            super("over budget", null);
        }
    }
}
