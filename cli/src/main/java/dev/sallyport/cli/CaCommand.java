package dev.sallyport.cli;

import picocli.CommandLine.Command;

/** {@code sallyport ca}: the local certificate authority that signs the proxy's per-host certificates. */
@Command(
        name = "ca",
        mixinStandardHelpOptions = true,
        description = "Create and export the local certificate authority.",
        subcommands = {CaInitCommand.class, CaExportCommand.class})
public final class CaCommand implements Runnable {

    @Override
    public void run() {
        throw new UsageException("'ca' needs a subcommand (expected: init or export)");
    }
}
