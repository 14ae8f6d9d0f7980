package dev.sallyport.cli;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import dev.sallyport.cli.audit.AuditReader;
import dev.sallyport.cli.audit.Replay;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport policy replay POLICY AUDIT...}: what a candidate policy would have decided differently. */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Decide every recorded request and tunnel again under POLICY; print what would change, grouped.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:no change", "1:some decision would change (or an audit file cannot be read)",
            "2:the policy is invalid, or a line is not an audit record"})
public final class PolicyReplayCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "POLICY", description = "The candidate policy file (YAML).")
    Path policy;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "AUDIT", description = "Audit logs, oldest first.")
    List<String> audits;

    @Override
    public Integer call() {
        PolicyEngine engine;
        try {
            engine = PolicyEngine.compile(PolicyLoader.load(policy));
        } catch (PolicyException e) {
            throw new UsageException(policy + ": invalid policy, " + e.problems().size() + " problem(s), first: "
                    + e.problems().getFirst() + " (see 'sallyport policy check')");
        }
        Replay replay = new Replay(engine);
        int bad;
        try {
            bad = new AuditReader().readAll(audits, spec.commandLine().getErr(), replay::add);
        } catch (UncheckedIOException e) {
            throw new RuntimeFailure(e.getMessage(), e);
        }
        replay.print(spec.commandLine().getOut(), policy.toString());
        spec.commandLine().getOut().flush();
        return bad > 0 ? 2 : replay.changed() ? 1 : 0;
    }
}
