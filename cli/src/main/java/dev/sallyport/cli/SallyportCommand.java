package dev.sallyport.cli;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The top of the command tree; each subcommand is one class. The subcommands are listed here rather than in the
 * annotation so that a command line builds only the one it names: picocli reads every subcommand's annotations
 * when it is added (about 0.1 s for all of them), and {@code sallyport proxy} should start fast.
 */
@Command(
        name = "sallyport",
        mixinStandardHelpOptions = true,
        version = "sallyport 0.1.0",
        description = "Egress gateway for sandboxed workloads: a TLS-intercepting proxy and a sandbox runner.")
public final class SallyportCommand implements Runnable {

    /** Every subcommand by name, in the order help lists them; each name is its class's {@code @Command} name. */
    static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new UsageException("a subcommand is required (expected: one of "
                + String.join(", ", spec.subcommands().keySet()) + "; see 'sallyport --help')");
    }

    /**
     * The command tree for {@code args}: the top command with only the subcommand that {@code args} names, or
     * with all of them when the first argument names none (help, a typo, no argument at all).
     */
    static CommandLine tree(String... args) {
        CommandLine cli = new CommandLine(new SallyportCommand());
        String first = args.length > 0 ? args[0] : "";
        SUBCOMMANDS.forEach((name, make) -> {
            if (!SUBCOMMANDS.containsKey(first) || name.equals(first)) {
                cli.addSubcommand(name, make.get());
            }
        });
        return cli;
    }

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> all = new LinkedHashMap<>();
        all.put("proxy", ProxyCommand::new);
        all.put("ca", CaCommand::new);
        all.put("policy", PolicyCommand::new);
        all.put("run", RunCommand::new);
        all.put("accept", AcceptCommand::new);
        all.put("audit", AuditCommand::new);
        all.put("secrets", SecretsCommand::new);
        all.put("doctor", DoctorCommand::new);
        all.put("cleanup", CleanupCommand::new);
        return Collections.unmodifiableMap(all);
    }
}
