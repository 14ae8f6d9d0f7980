package dev.sallyport.sandbox.net;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The iptables rules CNI's firewall plugin adds for each bridge ({@code ingressPolicy} {@code same-bridge} or
 * {@code isolated}, which nerdctl always sets) in the chains {@code CNI-ISOLATION-STAGE-1} and {@code -2} of table
 * {@code filter}, for IPv4 and IPv6, and never removes: it cannot tell whether another container still uses the
 * bridge. Each sandbox has a bridge of its own, so the runner removes them once its bridge is gone.
 */
public final class IsolationRules {

    static final List<String> CHAINS = List.of("CNI-ISOLATION-STAGE-1", "CNI-ISOLATION-STAGE-2");
    static final List<String> TOOLS = List.of("iptables", "ip6tables");

    private IsolationRules() {
    }

    /**
     * Deletes every rule of the isolation chains that names ({@code -i} or {@code -o}) a bridge {@code remove}
     * accepts, and returns the deletions. A chain or tool that does not exist is skipped.
     */
    public static List<HostCommand> remove(CommandRunner runner, Predicate<String> remove) throws IOException {
        List<HostCommand> deletions = new ArrayList<>();
        for (String tool : TOOLS) {
            if (!runner.dryRun() && Executables.find(tool).isEmpty()) {
                continue;
            }
            for (String chain : CHAINS) {
                CommandResult listed = runner.capture(HostCommand.tolerant(tool, "-w", "-t", "filter", "-S", chain));
                if (listed.exit() != 0) {
                    continue;
                }
                for (String rule : listed.stdout().lines().toList()) {
                    deletion(tool, chain, rule, remove).ifPresent(deletions::add);
                }
            }
        }
        for (HostCommand deletion : deletions) {
            runner.capture(deletion);
        }
        return deletions;
    }

    /** The {@code -D} command for one line of {@code iptables -S CHAIN} if it names a bridge to remove. */
    static Optional<HostCommand> deletion(String tool, String chain, String rule, Predicate<String> remove) {
        List<String> words = words(rule);
        if (words.size() < 3 || !words.get(0).equals("-A") || !words.get(1).equals(chain)) {
            return Optional.empty();
        }
        boolean named = false;
        for (int i = 2; i + 1 < words.size(); i++) {
            String flag = words.get(i);
            if ((flag.equals("-i") || flag.equals("-o")) && remove.test(words.get(i + 1))) {
                named = true;
            }
        }
        if (!named) {
            return Optional.empty();
        }
        List<String> argv = new ArrayList<>(List.of(tool, "-w", "-t", "filter", "-D", chain));
        argv.addAll(words.subList(2, words.size()));
        return Optional.of(new HostCommand(argv, null, true));
    }

    /** Splits an {@code iptables -S} line into words: blanks separate, double quotes group, backslash escapes. */
    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        boolean inWord = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\\' && i + 1 < line.length()) {
                word.append(line.charAt(++i));
                inWord = true;
            } else if (c == '"') {
                quoted = !quoted;
                inWord = true;
            } else if (Character.isWhitespace(c) && !quoted) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            words.add(word.toString());
        }
        return words;
    }
}
