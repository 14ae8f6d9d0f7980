package dev.sallyport.policy;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The {@code sandbox} section: how {@code sallyport run} treats the workspace and the host folders around it. The
 * proxy ignores it; a shared proxy's file may hold it for the runs that read the same file.
 *
 * @param git     whether the command may write the workspace's {@code .git} (hooks and config stay read-only either
 *                way)
 * @param hold    names of host-obeyed tool configs held back after a run, on top of the built-in table (a relative
 *                path such as {@code .tool.toml} or {@code config/tool.yaml}, matched in every folder)
 * @param scratch host folders shown with their contents and writable inside, every change thrown away at the end
 *                (an absolute path, or {@code ~/...} below the home folder)
 */
public record SandboxSettings(GitAccess git, List<String> hold, List<String> scratch) {

    /** What the command may do to {@code .git}. */
    public enum GitAccess {
        /** Commit, fetch, branch: objects, refs and the index writable; hooks and config read-only. */
        WRITABLE,
        /** The whole {@code .git} read-only. */
        READ_ONLY
    }

    /** What {@code hold} items look like. */
    public static final String HOLD_EXPECTED = "a relative file path such as .tool.toml or config/tool.yaml "
            + "(no '..', no leading '/', letters, digits and . _ - + only)";
    /** What {@code scratch} items look like. */
    public static final String SCRATCH_EXPECTED = "an absolute folder path or ~/PATH below the home folder";
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._+-]+");

    /** No section: .git writable (guarded), the built-in table only, no scratch folders. */
    public static final SandboxSettings DEFAULTS = new SandboxSettings(GitAccess.WRITABLE, List.of(), List.of());

    public SandboxSettings {
        Objects.requireNonNull(git, "git");
        hold = List.copyOf(hold);
        scratch = List.copyOf(scratch);
        hold.forEach(SandboxSettings::checkHold);
        scratch.forEach(SandboxSettings::checkScratch);
    }

    /** {@code name} when it is a valid {@code hold} item; else an IllegalArgumentException saying why. */
    public static String checkHold(String name) {
        String[] parts = name.split("/", -1);
        for (String part : parts) {
            if (part.isEmpty() || part.equals(".") || part.equals("..") || !SEGMENT.matcher(part).matches()) {
                throw new IllegalArgumentException("'" + name + "' is not a relative file path");
            }
        }
        return name;
    }

    /** {@code path} when it is a valid {@code scratch} item; else an IllegalArgumentException saying why. */
    public static String checkScratch(String path) {
        String rest = path.startsWith("~/") ? path.substring(1) : path;
        if (!rest.startsWith("/") || rest.equals("/") || rest.contains("/../") || rest.endsWith("/..")
                || rest.contains("\0")) {
            throw new IllegalArgumentException("'" + path + "' is not an absolute path or ~/PATH");
        }
        return path;
    }
}
