package dev.sallyport.cli;

import java.io.Console;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;

import dev.sallyport.policy.StateDirectory;
import dev.sallyport.sandbox.Held;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport accept [--workdir DIR] [--list | --yes | --discard] [PATH...]}: shows what runs in DIR held back
 * (tool configs, nested repositories' hooks and configs; {@link Held}) as a diff against the workspace, and applies
 * the changes the user chooses: on a terminal it asks per change, {@code --yes} applies them all, {@code --discard}
 * drops them.
 */
@Command(name = "accept", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Show what 'sallyport run' held back from the workspace (tool configs, git hooks and configs) "
                + "as a diff, and apply the changes you choose.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:shown, applied or dropped as asked", "1:a change could not be applied",
            "2:bad arguments (a PATH that holds nothing)"})
public final class AcceptCommand implements Callable<Integer> {
    /** A proposed content with a NUL byte in its first part is shown by size, not as a diff. */
    private static final int BINARY_PROBE = 8000;

    @Spec
    CommandSpec spec;

    @Option(names = "--workdir", paramLabel = "DIR", description = "The workspace of the runs (default: the current folder).")
    Path workdir;

    @Option(names = "--list", description = "Only list what is held, one line each.")
    boolean list;

    @Option(names = "--yes", description = "Apply every chosen change without asking.")
    boolean yes;

    @Option(names = "--discard", description = "Drop the chosen changes; the workspace keeps what it has.")
    boolean discard;

    @Parameters(paramLabel = "PATH", arity = "0..*", description = "Only these paths (relative to the workspace; default: all).")
    List<Path> paths = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        if ((list ? 1 : 0) + (yes ? 1 : 0) + (discard ? 1 : 0) > 1) {
            throw new UsageException("--list, --yes, --discard: more than one given (expected: at most one)");
        }
        Path workspace = (workdir == null ? Path.of("") : workdir).toAbsolutePath().normalize();
        Held held = Held.of(StateDirectory.resolve().resolve(Held.FOLDER), workspace);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<Held.Item> items = chosen(held, workspace);
        if (items.isEmpty()) {
            out.println("nothing held back for " + workspace);
            return 0;
        }
        Console console = terminal();
        int failed = 0;
        int left = 0;
        for (Held.Item item : items) {
            if (list) {
                out.println(item.kind().name().toLowerCase(Locale.ROOT) + "\t" + item.path() + "\t" + item.why());
                continue;
            }
            if (discard) {
                held.discard(item);
                out.println("dropped " + item.path() + " (the workspace keeps what it has)");
                continue;
            }
            out.println("# " + item.path() + ": " + item.why());
            diff(held, workspace, item).forEach(out::println);
            boolean apply = yes || (console != null && ask(console, item));
            if (!apply) {
                left++;
                continue;
            }
            try {
                held.accept(item);
                out.println("applied " + item.path());
            } catch (IOException e) {
                err.println("sallyport accept: " + workspace.resolve(item.path()) + ": not applied: " + e.getMessage());
                failed++;
            }
        }
        if (left > 0) {
            out.println(left + " change" + (left == 1 ? "" : "s") + " still held back; apply with: sallyport accept "
                    + "--workdir " + workspace + " --yes [PATH...], or drop with --discard");
        }
        out.flush();
        return failed > 0 ? 1 : 0;
    }

    private List<Held.Item> chosen(Held held, Path workspace) throws IOException {
        List<Held.Item> all = held.items();
        if (paths.isEmpty()) {
            return all;
        }
        List<Held.Item> out = new ArrayList<>();
        for (Path p : paths) {
            Path absolute = p.isAbsolute() ? p.normalize() : workspace.resolve(p).normalize();
            String relative = absolute.startsWith(workspace) ? workspace.relativize(absolute).toString() : p.toString();
            Held.Item item = all.stream().filter(i -> i.path().equals(relative)).findFirst().orElseThrow(() ->
                    new UsageException("PATH: " + p + " holds nothing for " + workspace + " (expected: one of "
                            + (all.isEmpty() ? "none: nothing is held" : String.join(", ",
                            all.stream().map(Held.Item::path).toList())) + ")"));
            out.add(item);
        }
        return out;
    }

    /** The console when stdin and stdout are a terminal, else null (no one to ask). */
    @SuppressWarnings("SystemConsoleNull")     // isTerminal() decides; null is a JVM without any console
    private static Console terminal() {
        Console console = System.console();
        return console != null && console.isTerminal() ? console : null;
    }

    private static boolean ask(Console console, Held.Item item) {
        String answer = console.readLine("apply this change to %s? [y/N] ", item.path());
        return answer != null && answer.strip().toLowerCase(Locale.ROOT).startsWith("y");
    }

    /** The unified diff from what the workspace holds now to what the run proposed. */
    static List<String> diff(Held held, Path workspace, Held.Item item) throws IOException {
        Path current = workspace.resolve(item.path());
        byte[] before = Files.isRegularFile(current, LinkOption.NOFOLLOW_LINKS) ? Files.readAllBytes(current)
                : new byte[0];
        byte[] after = item.kind() == Held.Kind.CHANGE ? held.proposed(item) : new byte[0];
        if (binary(before) || binary(after)) {
            return List.of("binary: " + before.length + " bytes now, " + after.length + " bytes proposed");
        }
        List<String> from = lines(before);
        List<String> to = lines(after);
        String a = Files.exists(current, LinkOption.NOFOLLOW_LINKS) ? "a/" + item.path() : "/dev/null";
        String b = item.kind() == Held.Kind.DELETE ? "/dev/null" : "b/" + item.path();
        List<String> diff = UnifiedDiffUtils.generateUnifiedDiff(a, b, from, DiffUtils.diff(from, to), 3);
        if (diff.isEmpty()) {
            return List.of("(no difference in content; mode " + String.format("%04o", item.mode()) + " proposed)");
        }
        return diff;
    }

    private static List<String> lines(byte[] content) {
        String text = new String(content, StandardCharsets.UTF_8);
        return text.isEmpty() ? List.of() : List.of(text.split("\n", -1));
    }

    private static boolean binary(byte[] content) {
        for (int i = 0; i < Math.min(content.length, BINARY_PROBE); i++) {
            if (content[i] == 0) {
                return true;
            }
        }
        return false;
    }
}
