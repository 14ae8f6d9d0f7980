package dev.sallyport.cli;

import dev.sallyport.proxy.Prewarm;
import java.io.PrintWriter;

import picocli.CommandLine;

/** Entry point of the one {@code sallyport} command: builds the picocli tree and maps failures to exit codes. */
public final class Main {

    private Main() {}

    public static void main(String[] args) {
        if (args.length > 0 && (args[0].equals("proxy") || args[0].equals("run"))) {
            Prewarm.start();   // BoringSSL, trust store and EC code warm up while the arguments are parsed
        }
        int code = run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
        System.exit(code);
    }

    /** Runs one command line with the given writers; returns the exit code (0 ok, 1 runtime failure, 2 usage). */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = commandLine(out, err);
        return cli.execute(args);
    }

    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new SallyportCommand());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler(new FailureHandler());
        cli.setParameterExceptionHandler(new UsageHandler());
        return cli;
    }
}
