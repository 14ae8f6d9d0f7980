package dev.sallyport.sandbox;

import dev.sallyport.sandbox.internal.Landlock;

/** Asks the running kernel which Landlock ABI it offers (for {@code doctor}-style reports and fail-closed checks). */
public final class LandlockProbe {
    /** The ABI the sandbox needs to enforce all of its rules: file system (1-3) plus TCP connect (4). */
    public static final int FULL_ABI = 4;

    private LandlockProbe() {
    }

    /** The Landlock ABI version, 0 when Landlock is missing, disabled, or the architecture is not supported. */
    public static int abi() {
        try {
            return Landlock.forCurrentArch().abi();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** One line for a report, e.g. {@code landlock: ABI 7 (file system, TCP connect, abstract-unix and signal scopes)}. */
    public static String describe(int abi) {
        if (abi <= 0) {
            return "landlock: not available (expected: Linux 5.13+ with landlock enabled; the sandbox then relies on "
                    + "mounts and seccomp only)";
        }
        StringBuilder parts = new StringBuilder("file system");
        if (abi >= 4) {
            parts.append(", TCP connect");
        }
        if (abi >= 6) {
            parts.append(", abstract-unix and signal scopes");
        }
        if (abi >= 9) {
            parts.append(", pathname unix sockets");
        }
        String gap = abi < FULL_ABI ? "; TCP is not restricted by landlock (expected: ABI >= 4, Linux 6.7+)" : "";
        return "landlock: ABI " + abi + " (" + parts + ")" + gap;
    }
}
