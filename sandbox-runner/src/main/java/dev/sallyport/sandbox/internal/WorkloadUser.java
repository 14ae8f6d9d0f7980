package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The host uid and gid the sandboxed command runs as. A normal user's command runs as that user. Root's never
 * runs as root: dropped capabilities leave a root process the owner of every root-owned file it can see (0600
 * files in the folders shown read-only, {@code /proc/sys} on a kernel without Landlock), so the command runs as
 * {@code SUDO_UID}/{@code SUDO_GID} when sudo started us, else as the workspace's owner when that is not root,
 * else as {@link #DEDICATED_UID}, a uid of its own, with the workspace shown through an {@link HostMount} so
 * that it stays writable.
 */
public sealed interface WorkloadUser {
    /** The uid (and gid) a root runner's command gets when neither sudo nor the workspace name a user. */
    int DEDICATED_UID = 65533;
    /** The user name that uid has inside the sandbox. */
    String DEDICATED_NAME = "sallyport";

    int uid();

    int gid();

    /** Started by a normal user: the command runs as that user, nothing changes hands. */
    record Caller(int uid, int gid) implements WorkloadUser {}

    /** Started by root: the command runs as {@code uid}:{@code gid}, chosen for {@code why}. */
    record Dropped(int uid, int gid, Why why) implements WorkloadUser {
        public Dropped {
            if (uid == 0) {
                throw new IllegalArgumentException("uid: 0 (expected: an unprivileged uid)");
            }
        }
    }

    /** Why a root runner's command got its uid. */
    enum Why {
        SUDO("SUDO_UID/SUDO_GID: sudo's caller"),
        WORKSPACE_OWNER("the workspace's owner"),
        DEDICATED("a uid of its own, as neither SUDO_UID nor the workspace name a user other than root");

        private final String text;

        Why(String text) {
            this.text = text;
        }
    }

    /** The one line a root runner says at start; empty for a normal user. */
    default Optional<String> notice() {
        return switch (this) {
            case Caller c -> Optional.empty();
            case Dropped d -> Optional.of("started as root: the command runs as uid " + d.uid() + " gid " + d.gid()
                    + " (" + d.why().text + "), not as root");
        };
    }

    /** Chooses for this process (its effective uid), the workspace and the host environment. */
    static WorkloadUser choose(Path workspace, Map<String, String> hostEnv) throws IOException {
        Syscalls sys = Syscalls.current();
        int euid = (int) sys.call("geteuid", 0, 0, 0).value();
        int egid = (int) sys.call("getegid", 0, 0, 0).value();
        if (euid != 0) {
            return new Caller(euid, egid);
        }
        Optional<Integer> sudoUid = id(hostEnv.get("SUDO_UID"));
        if (sudoUid.isPresent()) {
            int gid = id(hostEnv.get("SUDO_GID")).orElse(HostAccounts.primaryGroup(sudoUid.get()).orElse(sudoUid.get()));
            return new Dropped(sudoUid.get(), gid, Why.SUDO);
        }
        int owner = (int) Files.getAttribute(workspace, "unix:uid");
        if (owner != 0) {
            return new Dropped(owner, (int) Files.getAttribute(workspace, "unix:gid"), Why.WORKSPACE_OWNER);
        }
        return new Dropped(DEDICATED_UID, DEDICATED_UID, Why.DEDICATED);
    }

    /** A uid or gid other than root's from a variable, or empty. */
    private static Optional<Integer> id(String value) {
        if (value == null || !value.matches("[0-9]{1,10}")) {
            return Optional.empty();
        }
        long id = Long.parseLong(value);
        return id > 0 && id < 0xffffffffL ? Optional.of((int) id) : Optional.empty();
    }

    /** True when {@code uid}:{@code gid} (no other groups) can pass every folder above {@code path} and read it. */
    static boolean reaches(Path path, int uid, int gid) throws IOException {
        return passesTo(path, uid, gid) && permits(path, uid, gid, Files.isDirectory(path) ? 5 : 4);
    }

    /** True when every folder above {@code path} lets {@code uid}:{@code gid} (no other groups) through. */
    static boolean passesTo(Path path, int uid, int gid) throws IOException {
        for (Path dir = path.toAbsolutePath().getParent(); dir != null; dir = dir.getParent()) {
            if (!permits(dir, uid, gid, 1)) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code bits} (r=4, w=2, x=1) are granted to {@code uid}:{@code gid} by the mode of {@code p}. */
    private static boolean permits(Path p, int uid, int gid, int bits) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid");
        int mode = (int) a.get("mode");
        int granted = (int) a.get("uid") == uid ? mode >> 6 : (int) a.get("gid") == gid ? mode >> 3 : mode;
        return (granted & bits) == bits;
    }
}
