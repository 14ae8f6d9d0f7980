package dev.sallyport.cli;

import picocli.CommandLine.Command;

/** {@code sallyport policy}: validate a policy file, or ask it what it decides for one request. */
@Command(
        name = "policy",
        mixinStandardHelpOptions = true,
        description = "Check a policy file, or explain its decision for one request.",
        subcommands = {PolicyCheckCommand.class, PolicyExplainCommand.class, PolicySuggestCommand.class,
            PolicyReplayCommand.class})
public final class PolicyCommand implements Runnable {

    @Override
    public void run() {
        throw new UsageException("'policy' needs a subcommand (expected: check, explain, suggest or replay)");
    }
}
