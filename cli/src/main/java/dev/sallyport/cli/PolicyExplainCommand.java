package dev.sallyport.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.sallyport.policy.Explain;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.Reasons;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport policy explain FILE --url URL [--method M]}: the decision for one request and the rule (name
 * and line) that made it. Exit 0 whatever the decision; 2 when the file or the URL is invalid. There is no
 * {@code --client} until the proxy tells clients apart (a policy file cannot name clients yet either).
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

    @Override
    public Integer call() throws Exception {
        PolicyEngine engine = PolicyEngine.compile(PolicyLoader.load(file));
        Explain.Explanation explanation = Explain.explain(engine, url, method, null);
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
