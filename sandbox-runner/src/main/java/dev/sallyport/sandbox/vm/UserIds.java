package dev.sallyport.sandbox.vm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;

/**
 * The uid and gid the workload runs as, so files it writes in the workspace belong to the caller on the host
 * (Kata passes uids through virtio-fs 1:1; nerdctl does not chown mounts). Never root: uid or gid 0 in the guest
 * could leave setuid- or setgid-root programs in the host workspace for someone on the host to run.
 */
public record UserIds(int uid, int gid) {

    public UserIds {
        if (uid < 0 || gid < 0) {
            throw new IllegalArgumentException("uid/gid: " + uid + ":" + gid + " (expected: >= 0)");
        }
    }

    /**
     * The caller: {@code SUDO_UID}/{@code SUDO_GID} when the runner was started through sudo (nerdctl needs root),
     * else the owner of the workspace folder; refused when that is root.
     */
    public static UserIds caller(Path workspace) throws IOException {
        return caller(workspace, System.getenv());
    }

    static UserIds caller(Path workspace, Map<String, String> env) throws IOException {
        String sudoUid = env.get("SUDO_UID");
        String sudoGid = env.get("SUDO_GID");
        if (sudoUid != null && sudoGid != null && sudoUid.matches("[0-9]{1,9}") && sudoGid.matches("[0-9]{1,9}")) {
            UserIds sudoer = new UserIds(Integer.parseInt(sudoUid), Integer.parseInt(sudoGid));
            if (!sudoer.root()) {
                return sudoer;
            }
        }
        int uid = (Integer) Files.getAttribute(workspace, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int gid = (Integer) Files.getAttribute(workspace, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        UserIds owner = new UserIds(uid, gid);
        if (owner.root()) {
            throw new IllegalArgumentException("workspace: " + workspace + " belongs to " + owner + " and sallyport "
                    + "was not started through sudo by another user (expected: a workspace owned by an unprivileged "
                    + "user, or sudo from that user: the workload never runs as root in the guest)");
        }
        return owner;
    }

    /** {@code true} when the uid or the gid is 0. */
    public boolean root() {
        return uid == 0 || gid == 0;
    }

    @Override
    public String toString() {
        return uid + ":" + gid;
    }
}
