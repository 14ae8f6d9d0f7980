package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The workspace's git remotes that cannot work inside the sandbox: those reached over SSH, while the only way out
 * is HTTP(S) through the proxy. Read from the workspace's own {@code .git/config} (not the files it includes, nor
 * {@code url.*.insteadOf} rewrites): enough to warn before a fetch fails with "Could not resolve hostname".
 */
public final class GitRemotes {
    private static final Pattern SECTION = Pattern.compile("\\s*\\[\\s*remote\\s+\"([^\"]*)\"\\s*]\\s*");
    private static final Pattern OTHER_SECTION = Pattern.compile("\\s*\\[.*");
    private static final Pattern URL = Pattern.compile("\\s*(url|pushurl)\\s*=\\s*(.*?)\\s*");

    private GitRemotes() {
    }

    /** One line naming the SSH remotes of {@code workspace}'s repository and what to do; empty when it has none. */
    public static Optional<String> sshNotice(Path workspace) {
        List<String> ssh = sshRemotes(workspace.resolve(".git").resolve("config"));
        if (ssh.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("git remote " + String.join(", ", ssh) + " of " + workspace + " uses SSH, which cannot "
                + "leave the sandbox (its only way out is HTTP(S) through the proxy): fetch and push there will fail "
                + "(expected: an https:// remote, the token given as a secret; README.md, 'git remotes')");
    }

    /** The names of the remotes in {@code config} whose url or pushurl is an SSH one, in file order, each once. */
    static List<String> sshRemotes(Path config) {
        List<String> lines;
        try {
            lines = Files.readAllLines(config);
        } catch (IOException | RuntimeException e) {
            return List.of();      // no repository, or none git could read either
        }
        List<String> names = new ArrayList<>();
        String remote = null;
        for (String line : lines) {
            Matcher section = SECTION.matcher(line);
            if (section.matches()) {
                remote = section.group(1);
            } else if (OTHER_SECTION.matcher(line).matches()) {
                remote = null;
            } else if (remote != null) {
                Matcher url = URL.matcher(line);
                if (url.matches() && isSsh(unquoted(url.group(2))) && !names.contains(remote)) {
                    names.add(remote);
                }
            }
        }
        return List.copyOf(names);
    }

    /**
     * Whether git reaches {@code url} over SSH: {@code ssh://}, {@code git+ssh://}, {@code ssh+git://}, or the
     * scp-like {@code [user@]host:path} (a colon before any slash, and no {@code ://}).
     */
    static boolean isSsh(String url) {
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith("ssh://") || lower.startsWith("git+ssh://") || lower.startsWith("ssh+git://")) {
            return true;
        }
        int colon = url.indexOf(':');
        int slash = url.indexOf('/');
        return colon > 0 && !url.contains("://") && (slash < 0 || colon < slash);
    }

    private static String unquoted(String value) {
        return value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")
                ? value.substring(1, value.length() - 1) : value;
    }
}
