package dev.sallyport.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport proxy [--config FILE]}: runs the egress proxy in the foreground. */
@Command(name = "proxy", mixinStandardHelpOptions = true,
        description = "Run the egress proxy in the foreground (built-in deny-all default without --config).")
public final class ProxyCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "Policy file (default: built-in deny-all policy).")
    Path config;

    @Override
    public Integer call() throws Exception {
        Policy policy = config == null ? Policy.defaults() : PolicyLoader.load(config);
        var out = spec.commandLine().getOut();
        out.println("resolved configuration" + (config == null ? " (built-in default)" : " (" + config + ")") + ":");
        out.println("  listen: " + policy.proxy().listen().host() + ":" + policy.proxy().listen().port());
        out.println("  admin: " + policy.proxy().admin().host() + ":" + policy.proxy().admin().port());
        out.println("  mode: " + policy.mode());
        out.println("  rules: " + policy.rules().size());
        out.flush();
        return 0;
    }
}
