package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The sandbox's own {@code /etc/passwd} and {@code /etc/group}: root, the user the command runs as (its host name,
 * home inside the sandbox and shell) and nobody, instead of every account of the host (service accounts name the
 * software installed, user accounts the people). Reads the host's files only to name those three.
 */
public final class HostAccounts {
    static final int NOBODY = 65534;
    private static final Path PASSWD = Path.of("/etc/passwd");
    private static final Path GROUP = Path.of("/etc/group");

    private HostAccounts() {
    }

    /** Writes {@code passwd} and {@code group} into {@code dir} for a command running as {@code user}. */
    public static void write(Path dir, WorkloadUser user, Path home) throws IOException {
        Optional<String[]> host = entry(PASSWD, user.uid());
        String name = host.map(e -> e[0]).orElse(WorkloadUser.DEDICATED_NAME);
        String shell = host.map(e -> e[6]).filter(s -> s.startsWith("/") && Files.isExecutable(Path.of(s)))
                .orElse("/bin/sh");
        Map<Integer, String> users = new LinkedHashMap<>();
        users.put(0, "root:x:0:0:root:/root:/bin/sh");
        users.putIfAbsent(user.uid(), name + ":x:" + user.uid() + ":" + user.gid() + ":" + name + ":" + home + ":" + shell);
        users.putIfAbsent(NOBODY, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin");
        String group = entry(GROUP, user.gid()).map(e -> e[0]).orElse(name);
        String nogroup = entry(GROUP, NOBODY).map(e -> e[0]).orElse("nogroup");
        Map<Integer, String> groups = new LinkedHashMap<>();
        groups.put(0, "root:x:0:");
        groups.putIfAbsent(user.gid(), group + ":x:" + user.gid() + ":");
        groups.putIfAbsent(NOBODY, nogroup + ":x:65534:");
        Files.writeString(dir.resolve("passwd"), String.join("\n", users.values()) + "\n");
        Files.writeString(dir.resolve("group"), String.join("\n", groups.values()) + "\n");
    }

    /** The primary group of {@code uid} in the host's passwd file. */
    static Optional<Integer> primaryGroup(int uid) {
        return entry(PASSWD, uid).flatMap(e -> {
            try {
                return Optional.of(Integer.parseInt(e[3]));
            } catch (NumberFormatException ex) {
                return Optional.empty();
            }
        });
    }

    /** The home folder of {@code uid} in the host's passwd file. */
    static Optional<Path> home(int uid) {
        return entry(PASSWD, uid).map(e -> e[5]).filter(h -> h.startsWith("/")).map(Path::of);
    }

    /** The fields of the first line of a passwd-format file whose third field is {@code id}. */
    private static Optional<String[]> entry(Path file, int id) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            return Optional.empty();
        }
        String wanted = Integer.toUnsignedString(id);
        for (String line : lines) {
            String[] fields = line.split(":", -1);
            if (fields.length >= 3 && fields[2].equals(wanted) && !fields[0].isEmpty()
                    && (file.equals(GROUP) || fields.length >= 7)) {
                return Optional.of(fields);
            }
        }
        return Optional.empty();
    }
}
