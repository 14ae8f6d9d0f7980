package dev.sallyport.sandbox.vm;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The containerd runtime a sandbox runs under, by its user-facing name. */
public enum VmRuntime {
    /** Kata Containers: a KVM microVM per sandbox (containerd shim {@code containerd-shim-kata-v2}). */
    KATA("kata", "io.containerd.kata.v2"),
    /** Plain runc: namespaces only, shares the host kernel (for hosts without KVM; weakest). */
    RUNC("runc", "io.containerd.runc.v2"),
    /** gVisor: a user-space kernel, no VM. */
    RUNSC("runsc", "io.containerd.runsc.v1");

    private final String cliName;
    private final String runtimeType;

    VmRuntime(String cliName, String runtimeType) {
        this.cliName = cliName;
        this.runtimeType = runtimeType;
    }

    /** The value of {@code --runtime} on the sallyport command line. */
    public String cliName() {
        return cliName;
    }

    /** The containerd runtime type passed to {@code nerdctl run --runtime}. */
    public String runtimeType() {
        return runtimeType;
    }

    /** Parses {@code kata}, {@code runc} or {@code runsc} (case-insensitive). */
    public static VmRuntime parse(String text) {
        String wanted = text.strip().toLowerCase(Locale.ROOT);
        for (VmRuntime runtime : values()) {
            if (runtime.cliName.equals(wanted)) {
                return runtime;
            }
        }
        throw new IllegalArgumentException("runtime: '" + text + "' (expected: one of "
                + Arrays.stream(values()).map(VmRuntime::cliName).collect(Collectors.joining(", ")) + ")");
    }
}
