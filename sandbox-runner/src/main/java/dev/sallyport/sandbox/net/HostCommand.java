package dev.sallyport.sandbox.net;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One command the runner runs on the host: its argv, optional standard input (an nftables script), and whether
 * a failure is tolerated (removal of things that may already be gone).
 *
 * @param argv    program and arguments, never empty
 * @param stdin   text written to the command's standard input, or {@code null} for none
 * @param mayFail {@code true} when a non-zero exit is expected at times and must not stop the runner
 */
public record HostCommand(List<String> argv, /* @Nullable */ String stdin, boolean mayFail) {

    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

    public HostCommand {
        argv = List.copyOf(argv);
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("argv: empty (expected: a program and its arguments)");
        }
    }

    /** A command that must succeed. */
    public static HostCommand of(String... argv) {
        return new HostCommand(List.of(argv), null, false);
    }

    /** A command whose failure is tolerated (cleanup of things that may be gone already). */
    public static HostCommand tolerant(String... argv) {
        return new HostCommand(List.of(argv), null, true);
    }

    /** The same command with {@code text} on its standard input. */
    public HostCommand withStdin(String text) {
        return new HostCommand(argv, Objects.requireNonNull(text, "text"), mayFail);
    }

    /** The command as one shell line a person can paste; standard input shown as a here-document. */
    public String toShell() {
        StringBuilder line = new StringBuilder();
        for (String arg : argv) {
            if (!line.isEmpty()) {
                line.append(' ');
            }
            line.append(quote(arg));
        }
        if (mayFail) {
            line.append(" || true");
        }
        if (stdin != null) {
            line.append(" <<'EOF'\n").append(stdin);
            if (!stdin.endsWith("\n")) {
                line.append('\n');
            }
            line.append("EOF");
        }
        return line.toString();
    }

    /** Quotes {@code arg} for a POSIX shell when it holds anything beyond a conservative safe set. */
    public static String quote(String arg) {
        if (!arg.isEmpty() && SAFE.matcher(arg).matches()) {
            return arg;
        }
        return "'" + arg.replace("'", "'\\''") + "'";
    }
}
