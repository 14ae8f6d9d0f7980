package dev.sallyport.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.PolicyProblem;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport policy check FILE}: every problem in the file on its own line
 * ({@code FILE:LINE:COL: path: message (expected: ...)}) on stderr; exit 0 when valid, 2 when not.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Validate a policy file; print every problem as FILE:LINE:COL: path: message (expected: ...).",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:valid", "2:invalid (every problem printed on stderr)"})
public final class PolicyCheckCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The policy file (YAML).")
    Path file;

    @Override
    public Integer call() {
        try {
            Policy policy = PolicyLoader.load(file);
            spec.commandLine().getOut().printf("%s: valid (%d rules, %d secrets, mode %s)%n",
                    file, policy.rules().size(), policy.secrets().size(),
                    policy.mode().name().toLowerCase(java.util.Locale.ROOT));
            return 0;
        } catch (PolicyException e) {
            var err = spec.commandLine().getErr();
            e.problems().stream()
                    .sorted(java.util.Comparator.comparingInt(PolicyProblem::line).thenComparingInt(PolicyProblem::column))
                    .forEach(err::println);
            err.printf("%s: %d problem%s%n", file, e.problems().size(), e.problems().size() == 1 ? "" : "s");
            err.flush();
            return 2;
        }
    }
}
