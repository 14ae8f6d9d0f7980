package dev.sallyport.cli;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.proxy.inject.Placeholders;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport secrets env --config FILE}: the NAME=placeholder lines a sandbox gets instead of the values. */
@Command(name = "secrets", mixinStandardHelpOptions = true, description = "Placeholders that stand in for secrets.",
        subcommands = SecretsCommand.Env.class)
public final class SecretsCommand implements Runnable {

    @Override
    public void run() {
        throw new UsageException("'secrets' needs a subcommand (expected: env)");
    }

    @Command(name = "env", mixinStandardHelpOptions = true,
            description = "Print NAME=placeholder for each secret of the policy: exactly what a proxy running with this "
                    + "file and state directory expects. Never prints a secret's value.")
    static final class Env implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Option(names = "--config", required = true, paramLabel = "FILE", description = "The policy file.")
        Path config;

        @Override
        public Integer call() throws Exception {
            Policy policy = PolicyLoader.load(config);
            Map<String, String> placeholders = Placeholders.forPolicy(policy, StateDirectory.resolve());
            var out = spec.commandLine().getOut();
            placeholders.forEach((name, placeholder) -> out.println(name + "=" + placeholder));
            out.flush();
            return 0;
        }
    }
}
