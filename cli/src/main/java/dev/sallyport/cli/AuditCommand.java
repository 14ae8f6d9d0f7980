package dev.sallyport.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import dev.sallyport.cli.audit.AuditReader;
import dev.sallyport.cli.audit.AuditReport;
import dev.sallyport.cli.audit.AuditSummary;
import dev.sallyport.cli.audit.AuditVerifier;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.proxy.audit.AuditKey;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport audit summary FILE}: what an audit log says, for a reviewer; {@code audit verify FILE...}: whether
 * it is as the proxy wrote it; {@code audit key}: the public key its checkpoints are signed with.
 */
@Command(name = "audit", mixinStandardHelpOptions = true, description = "Read, verify and review the proxy's audit log.",
        subcommands = {AuditCommand.Summary.class, AuditCommand.Verify.class, AuditCommand.Report.class,
            AuditCommand.Key.class})
public final class AuditCommand implements Runnable {

    @Override
    public void run() {
        throw new UsageException("'audit' needs a subcommand (expected: summary, verify, report or key)");
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Check the hash chain and signed checkpoints of audit files (a rotated set oldest first).",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:the chain and its signatures hold", "1:a line breaks it (named on stdout), or a file cannot be read",
                "2:bad arguments"})
    static final class Verify implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Parameters(arity = "1..*", paramLabel = "FILE", description = "Audit files in the order written.")
        List<Path> files;

        @Option(names = "--key", paramLabel = "PEM",
                description = "A public key the checkpoints must be signed with (what 'sallyport audit key' prints); repeatable.")
        List<Path> keys = new ArrayList<>();

        @Option(names = "--partial", description = "The first file may begin mid-chain (its earlier files are gone).")
        boolean partial;

        @Override
        public Integer call() {
            List<PublicKey> trusted = new ArrayList<>();
            for (Path key : keys) {
                try {
                    trusted.add(AuditKey.readPublic(key));
                } catch (NoSuchFileException e) {
                    throw new UsageException("--key " + key + ": no such file (expected: a PEM public key from"
                            + " 'sallyport audit key')");
                } catch (IOException e) {
                    throw new UsageException("--key " + e.getMessage());
                }
            }
            AuditVerifier.Outcome outcome;
            try {
                outcome = new AuditVerifier(trusted, partial).verify(files);
            } catch (NoSuchFileException e) {
                throw new RuntimeFailure(e.getFile() + ": no such file (expected: an audit log written by 'sallyport proxy')");
            } catch (IOException e) {
                throw new RuntimeFailure("cannot read: " + e.getMessage(), e);
            }
            var out = spec.commandLine().getOut();
            return switch (outcome) {
                case AuditVerifier.Outcome.Broken b -> {
                    out.printf("%s: %s%n", b.where(), b.what());
                    out.flush();
                    yield 1;
                }
                case AuditVerifier.Outcome.Intact ok -> {
                    out.printf("intact: %d records and %d checkpoint%s in %d file%s, signed by %s%s%n", ok.records(),
                            ok.checkpoints(), ok.checkpoints() == 1 ? "" : "s", files.size(), files.size() == 1 ? "" : "s",
                            ok.fingerprint(),
                            trusted.isEmpty() ? " (the key the log names: pass --key with the proxy's exported key to"
                                    + " rule out a log re-signed with another)" : " (a key given)");
                    if ("rotate".equals(ok.lastAt())) {
                        out.printf("note: the last checkpoint (%s) ends a rotated file: the files written after it"
                                + " were not given%n", ok.lastCheckpoint());
                    }
                    if ("interval".equals(ok.lastAt())) {
                        out.printf("note: the last checkpoint (%s) is an interval one, not the close: the proxy was"
                                + " still running, or stopped without closing the log, or lines after it were cut off%n",
                                ok.lastCheckpoint());
                    }
                    out.flush();
                    yield 0;
                }
            };
        }
    }

    @Command(name = "report", mixinStandardHelpOptions = true,
            description = "Write one self-contained HTML page (and, with --json, the same as JSON) for a reviewer.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:written", "1:an audit file cannot be read, or an output cannot be written",
                "2:some lines are not audit records (each named on stderr; the report is still written)"})
    static final class Report implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Parameters(arity = "1..*", paramLabel = "AUDIT", description = "Audit logs, oldest first.")
        List<String> audits;

        @Option(names = "--out", required = true, paramLabel = "FILE", description = "The HTML report to write.")
        Path out;

        @Option(names = "--json", paramLabel = "FILE", description = "Also write the report's figures as JSON.")
        Path json;

        @Override
        public Integer call() {
            AuditReport report = new AuditReport();
            int bad;
            try {
                bad = new AuditReader().readAll(audits, spec.commandLine().getErr(), report::add);
            } catch (UncheckedIOException e) {
                throw new RuntimeFailure(e.getMessage(), e);
            }
            write(out, w -> report.writeHtml(w, audits));
            if (json != null) {
                write(json, w -> report.writeJson(w, audits));
            }
            return bad == 0 ? 0 : 2;
        }

        private interface Content {
            void to(Writer w) throws IOException;
        }

        private static void write(Path file, Content content) {
            try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                content.to(w);
            } catch (IOException e) {
                throw new RuntimeFailure(file + ": cannot write: " + e.getMessage(), e);
            }
        }
    }

    @Command(name = "key", mixinStandardHelpOptions = true,
            description = "Print the public key that signs the audit log's checkpoints (created in the state folder if missing).")
    static final class Key implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Option(names = "--out", paramLabel = "FILE", description = "Write it to FILE instead of standard output.")
        Path out;

        @Override
        public Integer call() {
            Path state = StateDirectory.resolve();
            String pem;
            try {
                pem = AuditKey.inStateFolder(state).publicPem();
            } catch (IOException e) {
                throw new RuntimeFailure(e.getMessage(), e);
            }
            if (out == null) {
                spec.commandLine().getOut().print(pem);
                spec.commandLine().getOut().flush();
                return 0;
            }
            try {
                Files.writeString(out, pem, StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new RuntimeFailure(out + ": cannot write: " + e.getMessage(), e);
            }
            return 0;
        }
    }

    @Command(name = "summary", mixinStandardHelpOptions = true,
            description = "Hosts reached, denied attempts, secrets used (by name), per rule.",
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {"0:every line read", "1:the file cannot be read", "2:some lines are not audit records (each named on stderr)"})
    static final class Summary implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "The audit log (JSON Lines), or - for standard input.")
        String file;

        @Override
        public Integer call() {
            AuditSummary summary = new AuditSummary();
            int bad;
            try {
                bad = new AuditReader().readAll(List.of(file), spec.commandLine().getErr(), summary::add);
            } catch (UncheckedIOException e) {
                throw new RuntimeFailure(e.getMessage(), e);
            }
            summary.print(spec.commandLine().getOut(), file);
            spec.commandLine().getOut().flush();
            return bad == 0 ? 0 : 2;
        }
    }
}
