package dev.sallyport.cli;

import picocli.CommandLine.Command;

/** The top of the command tree; each subcommand is one class. */
@Command(
        name = "sallyport",
        mixinStandardHelpOptions = true,
        version = "sallyport 0.1.0",
        description = "Egress gateway for sandboxed workloads: a TLS-intercepting proxy and a sandbox runner.",
        subcommands = {
            ProxyCommand.class,
            CaCommand.class,
            PolicyCommand.class,
            RunCommand.class,
            AuditCommand.class,
            SecretsCommand.class,
            DoctorCommand.class,
            CleanupCommand.class,
        })
public final class SallyportCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new UsageException("a subcommand is required (expected: one of "
                + String.join(", ", spec.subcommands().keySet()) + "; see 'sallyport --help')");
    }
}
