package dev.sallyport.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.sallyport.cli.audit.AuditReader;
import dev.sallyport.cli.audit.AuditSummary;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport audit summary FILE}: what an audit log says, for a reviewer. */
@Command(name = "audit", mixinStandardHelpOptions = true, description = "Read the proxy's audit log.",
        subcommands = AuditCommand.Summary.class)
public final class AuditCommand implements Runnable {

    @Override
    public void run() {
        throw new UsageException("'audit' needs a subcommand (expected: summary)");
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
            AuditReader reader = new AuditReader();
            AuditSummary summary = new AuditSummary();
            var err = spec.commandLine().getErr();
            int bad = 0;
            try (BufferedReader in = open()) {
                String line;
                int number = 0;
                while ((line = in.readLine()) != null) {
                    number++;
                    if (line.isBlank()) {
                        continue;
                    }
                    try {
                        summary.add(reader.parse(line));
                    } catch (IOException e) {
                        bad++;
                        err.printf("%s:%d: %s (expected: one JSON audit record per line)%n", file, number, e.getMessage());
                    }
                }
            } catch (NoSuchFileException e) {
                throw new RuntimeFailure(file + ": no such file (expected: an audit log written by 'sallyport proxy')");
            } catch (IOException e) {
                throw new RuntimeFailure(file + ": cannot read: " + e.getMessage(), e);
            }
            summary.print(spec.commandLine().getOut(), file);
            spec.commandLine().getOut().flush();
            return bad == 0 ? 0 : 2;
        }

        private BufferedReader open() throws IOException {
            if (file.equals("-")) {
                return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            }
            return Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8);
        }
    }
}
