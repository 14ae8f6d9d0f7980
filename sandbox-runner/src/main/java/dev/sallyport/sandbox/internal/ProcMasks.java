package dev.sallyport.sandbox.internal;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What of the sandbox's fresh {@code /proc} stays read-only or hidden, whatever Landlock offers: the kernel's
 * settings ({@code /proc/sys}: {@code core_pattern} runs a program as host root at the next crash) and the files
 * container runtimes hide by default (runc, crun and podman: kernel memory and keys, timers and scheduler
 * internals that help kernel exploits, ACPI and SCSI controls), plus the page and slab maps and kernel symbol
 * addresses. bwrap itself covers {@code /proc/sys} only when it looks writable at setup time, which a root
 * runner's setup did not see. Only entries this kernel has are listed (bwrap fails on a missing one).
 */
final class ProcMasks {
    /** Bound read-only onto themselves. */
    static final List<String> READ_ONLY = List.of("sys", "sysrq-trigger", "irq", "bus", "fs");
    /** Files hidden behind an empty read-only file. */
    static final List<String> MASKED_FILES = List.of("kcore", "keys", "timer_list", "timer_stats", "sched_debug",
            "latency_stats", "interrupts", "kpageflags", "kpagecount", "kpagecgroup", "slabinfo", "vmallocinfo",
            "kallsyms");
    /** Folders hidden behind an empty read-only folder. */
    static final List<String> MASKED_DIRS = List.of("acpi", "scsi", "asound");

    private ProcMasks() {
    }

    /** bwrap arguments, after {@code --proc /proc}: read-only binds, then the masks. */
    static List<String> args(Path proc, Path emptyFile, Path emptyDir) {
        List<String> args = new ArrayList<>();
        for (String name : READ_ONLY) {
            Path p = proc.resolve(name);
            if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                args.addAll(List.of("--ro-bind", p.toString(), "/proc/" + name));
            }
        }
        for (String name : MASKED_FILES) {
            if (Files.isRegularFile(proc.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
                args.addAll(List.of("--ro-bind", emptyFile.toString(), "/proc/" + name));
            }
        }
        for (String name : MASKED_DIRS) {
            if (Files.isDirectory(proc.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
                args.addAll(List.of("--ro-bind", emptyDir.toString(), "/proc/" + name));
            }
        }
        return args;
    }
}
