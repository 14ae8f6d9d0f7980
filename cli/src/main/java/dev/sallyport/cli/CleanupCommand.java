package dev.sallyport.cli;

import java.time.Duration;
import java.util.concurrent.Callable;

import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.DryRun;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.sandbox.net.SandboxCleanup;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport cleanup}: removes the networks, bridges and nftables tables that crashed VM runs left behind. */
@Command(name = "cleanup", mixinStandardHelpOptions = true,
        description = "Remove what crashed 'sallyport run --backend nerdctl' runs left behind (live runs are kept).")
public final class CleanupCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--dry-run", description = "Print the commands instead of running them.")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        var out = WriterStream.over(spec.commandLine().getOut());
        CommandRunner runner = dryRun ? new DryRun(out) : new HostShell(Duration.ofMinutes(1));
        SandboxCleanup.forHost(runner).run(out);
        out.flush();
        return 0;
    }
}
