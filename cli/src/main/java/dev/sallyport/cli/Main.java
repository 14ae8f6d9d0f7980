package dev.sallyport.cli;

import dev.sallyport.proxy.HeadStart;
import dev.sallyport.sandbox.StartTrace;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

import picocli.CommandLine;

/** Entry point of the one {@code sallyport} command: builds the picocli tree and maps failures to exit codes. */
public final class Main {

    private Main() {}

    public static void main(String[] args) {
        StartTrace.mark("main");
        // what a proxy start needs begins while the arguments are parsed (picocli takes a few tenths of a second)
        String command = args.length > 0 ? args[0] : "";
        if (command.equals("proxy")) {
            HeadStart.beginProxy(configNamedIn(args));
        } else if (command.equals("run") && !attaches(args)) {
            HeadStart.begin();   // an attached run starts no proxy: its head start would only take CPU from the run
        }
        int code = run(new PrintWriter(System.out, true, StandardCharsets.UTF_8),
                new PrintWriter(System.err, true, StandardCharsets.UTF_8), args);
        System.exit(code);
    }

    /**
     * The policy file of {@code proxy --config FILE} (or {@code --config=FILE}), found ahead of the parse; null
     * when the arguments name none (the built-in policy). Only a guess for the head start: picocli's parse is
     * what counts.
     */
    static Path configNamedIn(String... args) {
        try {
            for (int i = 1; i < args.length; i++) {
                if (args[i].equals("--config") && i + 1 < args.length) {
                    return Path.of(args[i + 1]);
                }
                if (args[i].startsWith("--config=")) {
                    return Path.of(args[i].substring("--config=".length()));
                }
            }
        } catch (InvalidPathException e) {
            // the parse reports it
        }
        return null;
    }

    /**
     * True when a {@code run} command line names a running proxy ({@code --proxy} before the command's own
     * arguments). Only a guess for the head start, as {@link #configNamedIn}: picocli's parse is what counts.
     */
    static boolean attaches(String... args) {
        for (int i = 1; i < args.length && !args[i].equals("--"); i++) {
            if (args[i].equals("--proxy") || args[i].startsWith("--proxy=")) {
                return true;
            }
        }
        return false;
    }

    /** Runs one command line with the given writers; returns the exit code (0 ok, 1 runtime failure, 2 usage). */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = commandLine(out, err, args);
        StartTrace.mark("command tree built");
        return cli.execute(args);
    }

    static CommandLine commandLine(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = SallyportCommand.tree(args);
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler(new FailureHandler());
        cli.setParameterExceptionHandler(new UsageHandler());
        return cli;
    }
}
