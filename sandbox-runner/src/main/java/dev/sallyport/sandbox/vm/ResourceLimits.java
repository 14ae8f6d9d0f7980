package dev.sallyport.sandbox.vm;

import java.util.regex.Pattern;

/**
 * Resource limits of one sandbox. Under Kata, memory and cpus also size the microVM.
 *
 * @param pids   most processes at once ({@code --pids-limit})
 * @param memory memory limit as nerdctl takes it, e.g. {@code 2g} ({@code --memory})
 * @param cpus   CPU share, e.g. {@code 2} or {@code 1.5} ({@code --cpus})
 * @param tmp    size of the guest's {@code /tmp} (also its {@code $HOME}), a tmpfs that counts against memory
 */
public record ResourceLimits(int pids, String memory, String cpus, String tmp) {

    private static final Pattern MEMORY = Pattern.compile("[1-9][0-9]*[kmg]?");
    private static final Pattern CPUS = Pattern.compile("[0-9]+(\\.[0-9]+)?");

    /** 512 processes, 2 GiB, 2 CPUs, 1 GiB of /tmp. */
    public static final ResourceLimits DEFAULTS = new ResourceLimits(512, "2g", "2", "1g");

    public ResourceLimits {
        if (pids < 1) {
            throw new IllegalArgumentException("pids: " + pids + " (expected: > 0)");
        }
        if (!MEMORY.matcher(memory).matches()) {
            throw new IllegalArgumentException("memory: '" + memory + "' (expected: a size like 512m or 2g)");
        }
        if (!MEMORY.matcher(tmp).matches()) {
            throw new IllegalArgumentException("tmp: '" + tmp + "' (expected: a size like 512m or 1g)");
        }
        if (!CPUS.matcher(cpus).matches() || Double.parseDouble(cpus) <= 0) {
            throw new IllegalArgumentException("cpus: '" + cpus + "' (expected: a number > 0 like 2 or 1.5)");
        }
    }
}
