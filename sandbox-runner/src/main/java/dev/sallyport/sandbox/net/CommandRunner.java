package dev.sallyport.sandbox.net;

import java.io.IOException;

/** Runs host commands: for real ({@link HostShell}) or by printing them ({@link DryRun}). */
public interface CommandRunner {

    /**
     * Runs {@code command} with its output captured. A non-zero exit of a command that may not fail is an
     * {@link IOException} naming the command and its first error line.
     */
    CommandResult capture(HostCommand command) throws IOException;

    /** Runs {@code command} attached to this process's terminal (the workload) and returns its exit status. */
    int interactive(HostCommand command) throws IOException;

    /** {@code true} when commands are only printed. */
    boolean dryRun();
}
