package dev.sallyport.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.sallyport.policy.Explain;
import dev.sallyport.policy.Identities;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.Reasons;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport policy explain FILE --url URL [--method M] [--client ID]}: the decision for one request of one
 * client identity (default {@code anonymous}: a connection that presented none) and the rule (name and line) that
 * made it. Exit 0 whatever the decision; 2 when the file, the URL or the identity is invalid.
 */
@Command(name = "explain", mixinStandardHelpOptions = true,
        description = "Print the decision for one request and the rule (name and line) that made it.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:explained (allowed or denied)", "2:invalid policy file, URL or method"})
public final class PolicyExplainCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The policy file (YAML).")
    Path file;

    @Option(names = "--url", required = true, paramLabel = "URL", description = "The request, e.g. https://api.example.com/v1/x")
    String url;

    @Option(names = "--method", paramLabel = "M", defaultValue = "GET", description = "HTTP method (default: ${DEFAULT-VALUE}).")
    String method;

    @Option(names = "--client", paramLabel = "ID", defaultValue = Identities.ANONYMOUS,
            description = "The client identity (what clients: on rules matches; default: ${DEFAULT-VALUE}, a client "
                    + "that presented none).")
    String client;

    @Override
    public Integer call() throws Exception {
        if (!Identities.isValidName(client)) {
            throw new UsageException("--client: '" + client + "' (expected: " + Identities.EXPECTED + ")");
        }
        PolicyEngine engine = PolicyEngine.compile(PolicyLoader.load(file));
        Explain.Explanation explanation = Explain.explain(engine, url, method, client);
        if (Reasons.INVALID_URL.equals(explanation.decision().reason())) {
            String error = explanation.lines().stream().filter(l -> l.startsWith("error: ")).findFirst()
                    .map(l -> l.substring("error: ".length())).orElse("not a valid URL");
            throw new UsageException("--url: " + error);
        }
        var out = spec.commandLine().getOut();
        out.print(explanation.text());
        out.flush();
        return 0;
    }
}
