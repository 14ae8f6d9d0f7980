package dev.sallyport.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a run wrote that the host would obey and was therefore held back: a tool config created, changed or deleted in
 * the sandbox, a git hook or a git config that a nested repository got there. The workspace keeps (or got back) what
 * was there before; the store keeps what the command wrote until the user accepts it ({@code sallyport accept}) or
 * drops it. One folder per workspace under the store folder (the runner's state directory, out of the sandbox's
 * reach): {@code workspace} names the workspace, {@code index.properties} lists the items, {@code files/} holds the
 * proposed contents at their relative paths. A later run's proposal for the same path replaces the earlier one.
 */
public final class Held {
    /** The folder under the state directory that holds every workspace's store. */
    public static final String FOLDER = "held";
    private static final String INDEX = "index.properties";
    private static final String FILES = "files";
    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");

    /** What the command did to the item's path. */
    public enum Kind {
        /** Created or changed it: the proposed content is in the store. */
        CHANGE,
        /** Deleted it. */
        DELETE
    }

    /** One held item: {@code path} relative to the workspace, the file mode to give it, and why it was held. */
    public record Item(String path, Kind kind, int mode, String why) {
        public Item {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(why, "why");
            if (path.isEmpty() || path.startsWith("/") || Path.of(path).normalize().startsWith("..")
                    || !Path.of(path).normalize().toString().equals(path)) {
                throw new IllegalArgumentException("path: '" + path + "' (expected: a normalized relative path)");
            }
        }
    }

    private final Path workspace;
    private final Path folder;

    private Held(Path workspace, Path folder) {
        this.workspace = workspace;
        this.folder = folder;
    }

    /** The store of {@code workspace} under {@code store} (created when something is held). */
    public static Held of(Path store, Path workspace) {
        Path ws = workspace.toAbsolutePath().normalize();
        return new Held(ws, store.toAbsolutePath().normalize().resolve(key(ws)));
    }

    /** The workspace this store is for. */
    public Path workspace() {
        return workspace;
    }

    /** The items held for this workspace, by path. */
    public synchronized List<Item> items() throws IOException {
        Properties index = readIndex();
        List<Item> items = new ArrayList<>();
        for (String path : new TreeSet<>(index.stringPropertyNames())) {
            items.add(parse(path, index.getProperty(path)));
        }
        return items;
    }

    /** The item held for {@code path}, if any. */
    public Optional<Item> item(String path) throws IOException {
        return items().stream().filter(i -> i.path().equals(path)).findFirst();
    }

    /** The content the command wrote for a {@link Kind#CHANGE} item. */
    public byte[] proposed(Item item) throws IOException {
        return Files.readAllBytes(stored(item.path()));
    }

    /**
     * Holds {@code source} (a file the command left, moved into the store: afterwards it is gone from where it
     * was) as the proposed content of {@code path}.
     */
    public synchronized void holdMoved(String path, Path source, int mode, String why) throws IOException {
        Item item = new Item(path, Kind.CHANGE, mode & 07777, why);
        Path target = prepare(item);
        Files.move(source, target, StandardCopyOption.REPLACE_EXISTING);
        record(item);
    }

    /** Holds {@code content} as the proposed content of {@code path}. */
    public synchronized void hold(String path, byte[] content, int mode, String why) throws IOException {
        Item item = new Item(path, Kind.CHANGE, mode & 07777, why);
        Files.write(prepare(item), content);
        record(item);
    }

    /** Holds the deletion of {@code path}. */
    public synchronized void holdDeletion(String path, String why) throws IOException {
        Item item = new Item(path, Kind.DELETE, 0, why);
        Files.deleteIfExists(prepare(item));
        record(item);
    }

    /**
     * Applies {@code item} to the workspace (writes the proposed content, or deletes the file) and drops it from the
     * store. Refuses to write through a symbolic link on the way.
     */
    public synchronized void accept(Item item) throws IOException {
        Path target = workspace.resolve(item.path()).normalize();
        for (Path dir = workspace; !dir.equals(target.getParent()); ) {
            dir = dir.resolve(target.getParent().getName(dir.getNameCount()).toString());
            if (Files.isSymbolicLink(dir)) {
                throw new IOException(dir + " is a symbolic link (expected: a folder; nothing is written through a "
                        + "link)");
            }
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(dir + " is not a folder (expected: a folder to hold " + item.path() + ")");
            }
        }
        switch (item.kind()) {
            case CHANGE -> {
                createFolders(workspace, target);
                Path temp = Files.createTempFile(target.getParent(), ".sallyport-accept-", ".tmp");
                try {
                    Files.copy(stored(item.path()), temp, StandardCopyOption.REPLACE_EXISTING);
                    Files.setPosixFilePermissions(temp, permissions(item.mode()));
                    ownLike(temp, Files.exists(target, LinkOption.NOFOLLOW_LINKS) ? target : target.getParent());
                    try {
                        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    } catch (AtomicMoveNotSupportedException e) {
                        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
                    }
                } finally {
                    Files.deleteIfExists(temp);
                }
            }
            case DELETE -> {
                if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IOException(target + " is a folder now (expected: the file the run deleted)");
                }
                Files.deleteIfExists(target);
            }
        }
        discard(item);
    }

    /** Drops {@code item} from the store, leaving the workspace as it is. */
    public synchronized void discard(Item item) throws IOException {
        Properties index = readIndex();
        index.remove(item.path());
        Files.deleteIfExists(stored(item.path()));
        if (index.isEmpty()) {
            RunningSandbox.deleteTree(folder);
        } else {
            writeIndex(index);
        }
    }

    private Path prepare(Item item) throws IOException {
        Path target = stored(item.path());
        if (!Files.isDirectory(folder)) {
            Files.createDirectories(folder.getParent());
            try {
                Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PRIVATE));
            } catch (java.nio.file.FileAlreadyExistsException raced) {
                // another run of the same workspace made it
            }
            Files.writeString(folder.resolve("workspace"), workspace + "\n", StandardCharsets.UTF_8);
        }
        Files.createDirectories(target.getParent());
        return target;
    }

    private void record(Item item) throws IOException {
        Properties index = readIndex();
        index.setProperty(item.path(), item.kind().name().toLowerCase(java.util.Locale.ROOT) + " "
                + String.format("%04o", item.mode()) + " " + item.why());
        writeIndex(index);
    }

    private Path stored(String path) {
        return folder.resolve(FILES).resolve(path);
    }

    private Properties readIndex() throws IOException {
        Properties index = new Properties();
        Path file = folder.resolve(INDEX);
        if (Files.isRegularFile(file)) {
            try (InputStream in = Files.newInputStream(file)) {
                index.load(in);
            }
        }
        return index;
    }

    private void writeIndex(Properties index) throws IOException {
        Path temp = folder.resolve(INDEX + ".tmp");
        try (OutputStream out = Files.newOutputStream(temp)) {
            index.store(out, "held back from the sandbox for " + workspace);
        }
        Files.move(temp, folder.resolve(INDEX), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Item parse(String path, String value) throws IOException {
        String[] parts = value.split(" ", 3);
        try {
            return new Item(path, Kind.valueOf(parts[0].toUpperCase(java.util.Locale.ROOT)),
                    Integer.parseInt(parts[1], 8), parts.length > 2 ? parts[2] : "");
        } catch (RuntimeException e) {
            throw new IOException("held store: entry '" + path + "' reads '" + value + "' (expected: KIND MODE WHY)", e);
        }
    }

    /**
     * Gives {@code target} the owner and group of {@code like} (links not followed): what a root runner writes into
     * a user's workspace stays the user's. Nothing to do, and nothing done, when they already match.
     */
    public static void ownLike(Path target, Path like) throws IOException {
        own(target, (Integer) Files.getAttribute(like, "unix:uid", LinkOption.NOFOLLOW_LINKS),
                (Integer) Files.getAttribute(like, "unix:gid", LinkOption.NOFOLLOW_LINKS));
    }

    /** Gives {@code target} the owner {@code uid} and group {@code gid} unless it has them. */
    public static void own(Path target, int uid, int gid) throws IOException {
        if ((Integer) Files.getAttribute(target, "unix:uid", LinkOption.NOFOLLOW_LINKS) != uid) {
            Files.setAttribute(target, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        }
        if ((Integer) Files.getAttribute(target, "unix:gid", LinkOption.NOFOLLOW_LINKS) != gid) {
            Files.setAttribute(target, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        }
    }

    /** Creates the folders above {@code file} up to {@code top}, each owned like the one above it. */
    public static void createFolders(Path top, Path file) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path dir = file.getParent(); !dir.equals(top) && !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
             dir = dir.getParent()) {
            missing.addFirst(dir);
        }
        for (Path dir : missing) {
            Files.createDirectory(dir);
            ownLike(dir, dir.getParent());
        }
    }

    /** The permission set of the nine low bits of {@code mode}. */
    public static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> out = new TreeSet<>();
        PosixFilePermission[] order = {PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_EXECUTE};
        for (int i = 0; i < order.length; i++) {
            if ((mode & (0400 >> i)) != 0) {
                out.add(order[i]);
            }
        }
        return out;
    }

    /** The workspace's folder name in the store: its last name and a hash of its path. */
    private static String key(Path workspace) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256")
                    .digest(workspace.toString().getBytes(StandardCharsets.UTF_8));
            String name = workspace.getFileName() == null ? "root"
                    : workspace.getFileName().toString().replaceAll("[^A-Za-z0-9._-]", "_");
            return name + "-" + HexFormat.of().formatHex(hash, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing", e);
        }
    }
}
