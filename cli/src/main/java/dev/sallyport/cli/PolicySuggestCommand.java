package dev.sallyport.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import dev.sallyport.cli.audit.AuditReader;
import dev.sallyport.cli.audit.Suggestion;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport policy suggest AUDIT...}: a first policy that allows what the logs show allowed, and no more. */
@Command(name = "suggest", mixinStandardHelpOptions = true,
        description = "Write a policy (YAML, with comments) allowing what the audit logs show allowed or would_deny.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:written", "1:an audit file cannot be read, or --out cannot be written",
            "2:a line is not an audit record (each named on stderr; the policy is still written)"})
public final class PolicySuggestCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "AUDIT", description = "Audit logs (a run in mode: audit), oldest first.")
    List<String> audits;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the policy to FILE instead of standard output.")
    Path out;

    @Override
    public Integer call() {
        Suggestion suggestion = new Suggestion();
        int bad;
        try {
            bad = new AuditReader().readAll(audits, spec.commandLine().getErr(), suggestion::add);
        } catch (UncheckedIOException e) {
            throw new RuntimeFailure(e.getMessage(), e);
        }
        StringWriter text = new StringWriter();
        try (PrintWriter w = new PrintWriter(text)) {
            suggestion.print(w, audits);
        }
        if (out == null) {
            spec.commandLine().getOut().print(text);
            spec.commandLine().getOut().flush();
        } else {
            try {
                Files.writeString(out, text.toString(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new RuntimeFailure(out + ": cannot write: " + e.getMessage(), e);
            }
        }
        return bad == 0 ? 0 : 2;
    }
}
