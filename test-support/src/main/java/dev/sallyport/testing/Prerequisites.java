package dev.sallyport.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs from the machine it runs on: root, a tool ({@code ip}, {@code nft}, {@code openssl}), a kernel
 * feature (network namespaces, Landlock, a tmpfs mount), a native transport. Where it is missing the test is
 * skipped with the reason on a developer's machine, and FAILS under CI ({@code CI=true}): a CI run must not pass
 * by skipping what it was meant to test.
 *
 * <p>One exception, on purpose: CI's second pass runs the sandbox tests as a normal user
 * ({@code scripts/test-unprivileged} sets {@code SALLYPORT_UNPRIVILEGED_PASS=1}). There, and only for
 * {@link #ROOT}, a missing prerequisite still skips; every other prerequisite fails as usual. The mirror image,
 * {@link #NORMAL_USER} (a normal runner's case), skips in CI's root pass and fails only in the unprivileged one.
 *
 * <pre>{@code
 * Prerequisites.requireRoot("network namespaces and nftables");
 * Prerequisites.require("nft", Executables.find("nft").isPresent(), "apt-get install nftables");
 * }</pre>
 */
public final class Prerequisites {
    /** The prerequisite an unprivileged pass may lack: running as uid 0. */
    public static final String ROOT = "root";
    /** The prerequisite CI's root pass lacks by design: running as a user other than root. */
    public static final String NORMAL_USER = "a normal user";
    /** The variable CI sets; {@code true} turns a missing prerequisite into a failure. */
    public static final String CI = "CI";
    /** Set to {@code 1} by {@code scripts/test-unprivileged}: root-only tests skip there even under CI. */
    public static final String UNPRIVILEGED_PASS = "SALLYPORT_UNPRIVILEGED_PASS";

    private Prerequisites() {
    }

    /**
     * Returns when {@code met}; otherwise skips the test (developer machine) or fails it (CI).
     *
     * @param prerequisite what is needed, in a word: {@code "root"}, {@code "nft"}, {@code "epoll"}, ...
     * @param why          what the test needs it for, or how to get it (shown in the skip or failure)
     */
    public static void require(String prerequisite, boolean met, String why) {
        require(prerequisite, met, why, System.getenv());
    }

    /** {@link #require(String, boolean, String)} against a given environment (tests of this class). */
    static void require(String prerequisite, boolean met, String why, Map<String, String> env) {
        Objects.requireNonNull(prerequisite, "prerequisite");
        Objects.requireNonNull(why, "why");
        if (met) {
            return;
        }
        String missing = "prerequisite '" + prerequisite + "' missing: " + why;
        if (mustFail(prerequisite, env)) {
            Assertions.fail(missing + " (CI=true: expected every prerequisite to be installed; see scripts/test)");
        }
        Assumptions.abort(missing);
    }

    /** {@link #require} for {@link #ROOT}: the effective user id is 0. */
    public static void requireRoot(String why) {
        require(ROOT, isRoot(), why);
    }

    /** {@link #require} for {@link #NORMAL_USER}: the effective user id is not 0. */
    public static void requireNormalUser(String why) {
        require(NORMAL_USER, !isRoot(), why);
    }

    /** Whether this process runs with effective user id 0 (read from {@code /proc/self/status}). */
    public static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    String[] ids = line.split("\\s+");
                    return ids.length > 2 && ids[2].equals("0");
                }
            }
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/self/status", e);
        }
    }

    private static boolean mustFail(String prerequisite, Map<String, String> env) {
        if (!"true".equals(env.get(CI))) {
            return false;
        }
        boolean unprivilegedPass = "1".equals(env.get(UNPRIVILEGED_PASS));
        return switch (prerequisite) {
            case ROOT -> !unprivilegedPass;
            case NORMAL_USER -> unprivilegedPass;
            default -> true;
        };
    }
}
