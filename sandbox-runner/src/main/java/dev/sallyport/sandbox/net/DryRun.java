package dev.sallyport.sandbox.net;

import java.io.PrintStream;
import java.util.Objects;

/** Prints every command as a shell line and runs none of them; each "succeeds" with empty output. */
public final class DryRun implements CommandRunner {

    private final PrintStream out;

    public DryRun(PrintStream out) {
        this.out = Objects.requireNonNull(out, "out");
    }

    @Override
    public CommandResult capture(HostCommand command) {
        out.println(command.toShell());
        return new CommandResult(0, "", "");
    }

    @Override
    public int interactive(HostCommand command) {
        out.println(command.toShell());
        return 0;
    }

    @Override
    public boolean dryRun() {
        return true;
    }

    /** Prints a comment line (a step that is not a command, such as starting the proxy). */
    public void note(String text) {
        out.println("# " + text);
    }
}
