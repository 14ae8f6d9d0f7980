package dev.sallyport.policy;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One entry of {@code git:}: what pushes git's smart HTTP protocol may make to repositories on some hosts. An entry
 * grants no access by itself (a rule must allow the host); it decides the requests that push: the discovery
 * {@code GET .../info/refs?service=git-receive-pack} and each ref update of {@code POST .../git-receive-pack}.
 * Fetches and clones ({@code git-upload-pack}) are not its business. On a host with entries, the first entry whose
 * {@code repositories} match decides; no entry matching is a refusal ({@link GitReasons#REPOSITORY_NOT_LISTED}).
 *
 * @param repositories globs over the repository path as the URL spells it without the leading {@code /} and a
 *                     trailing {@code .git} ({@code acme/widgets}); {@code *} stands for characters other than
 *                     {@code /}, {@code **} for any
 * @param refs         with {@code push: allow}: globs of the refs a push may update ({@code refs/heads/agent/*})
 * @param delete       deletes of matching refs are allowed (otherwise {@link GitReasons#DELETE_REFUSED})
 * @param createOnly   only refs that do not exist yet may be pushed: nothing already there is overwritten (the one
 *                     way to rule out force pushes at the proxy, which cannot see the repository's history)
 */
public record GitRule(String name, int line, List<String> hosts, Set<Integer> ports, List<String> repositories,
                      Push push, List<String> refs, boolean delete, boolean createOnly) {

    /** Whether the entry lets pushes through at all. */
    public enum Push { ALLOW, DENY }

    /** Every repository: what {@code repositories} means when absent. */
    public static final String ANY_REPOSITORY = "**";

    public GitRule {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(push, "push");
        hosts = List.copyOf(hosts);
        ports = Set.copyOf(ports);
        repositories = List.copyOf(repositories);
        refs = List.copyOf(refs);
        if (hosts.isEmpty() || ports.isEmpty() || repositories.isEmpty()) {
            throw new IllegalArgumentException("git '" + name + "': hosts, ports and repositories must not be empty");
        }
        if ((push == Push.ALLOW) == refs.isEmpty()) {
            throw new IllegalArgumentException("git '" + name + "': refs " + (refs.isEmpty() ? "missing" : "given")
                    + " with push: " + push.name().toLowerCase(java.util.Locale.ROOT)
                    + " (expected: refs with push: allow, and only then)");
        }
    }

    /** The rule name a decision of this entry carries: {@code git:NAME}. */
    public String ruleName() {
        return "git:" + name;
    }

    /** True when one of the entry's repository globs matches {@code path}. */
    public boolean covers(String path) {
        return repositories.stream().anyMatch(g -> glob(g, path));
    }

    /** The first of {@code entries} that covers {@code repository}, or null. */
    public static GitRule first(List<GitRule> entries, String repository) {
        for (GitRule r : entries) {
            if (r.covers(repository)) {
                return r;
            }
        }
        return null;
    }

    /** Why a push to {@code repository} is refused before any ref is seen (its discovery request), or null. */
    public static String discoveryRefusal(GitRule deciding) {
        return deciding == null ? GitReasons.REPOSITORY_NOT_LISTED
                : deciding.push == Push.DENY ? GitReasons.PUSH_DENIED : null;
    }

    /** Why {@code deciding} (nullable: none covers the repository) refuses {@code update}, or null. */
    public static String refusal(GitRule deciding, RefUpdate update) {
        String whole = discoveryRefusal(deciding);
        if (whole != null) {
            return whole;
        }
        if (!validRef(update.ref())) {
            return GitReasons.REF_INVALID;
        }
        if (deciding.refs.stream().noneMatch(g -> glob(g, update.ref()))) {
            return GitReasons.REF_NOT_ALLOWED;
        }
        return switch (update.change()) {
            case CREATE -> null;
            case DELETE -> deciding.delete ? null : GitReasons.DELETE_REFUSED;
            case UPDATE -> deciding.createOnly ? GitReasons.UPDATE_REFUSED : null;
        };
    }

    /** What this entry lets a push do, for {@code policy explain} and refusal messages. */
    public String pushText() {
        if (push == Push.DENY) {
            return "no pushes";
        }
        return "pushes to " + String.join(", ", refs) + (createOnly ? " (new refs only" : " (create, update")
                + (delete ? ", delete)" : "; deletes refused)");
    }

    /**
     * True for a ref name git itself accepts (its {@code check-ref-format} rules): under {@code refs/}, no empty,
     * {@code .}-leading or {@code .lock}-ending component, no {@code ..}, <code>@{</code>, control characters, space,
     * {@code ~ ^ : ? * [ \}, and no trailing {@code /} or {@code .}.
     */
    public static boolean validRef(String ref) {
        if (!ref.startsWith("refs/") || ref.endsWith("/") || ref.endsWith(".") || ref.contains("..")
                || ref.contains("@{") || ref.equals("@")) {
            return false;
        }
        for (int i = 0; i < ref.length(); i++) {
            char c = ref.charAt(i);
            if (c <= ' ' || c == 0x7f || "~^:?*[\\".indexOf(c) >= 0) {
                return false;
            }
        }
        for (String component : ref.split("/", -1)) {
            if (component.isEmpty() || component.startsWith(".") || component.endsWith(".lock")) {
                return false;
            }
        }
        return true;
    }

    /**
     * Glob match: {@code **} matches anything, {@code *} anything but {@code /}. Time proportional to the glob's
     * length times the text's (the text comes from the client: no backtracking).
     */
    static boolean glob(String g, String s) {
        boolean[] at = new boolean[s.length() + 1];    // at[j]: the glob so far matches s[0, j)
        at[0] = true;
        int gi = 0;
        while (gi < g.length()) {
            char c = g.charAt(gi);
            boolean[] next = new boolean[s.length() + 1];
            if (c == '*') {
                boolean any = gi + 1 < g.length() && g.charAt(gi + 1) == '*';
                boolean reach = false;
                for (int j = 0; j <= s.length(); j++) {
                    reach = at[j] || (reach && (any || s.charAt(j - 1) != '/'));
                    next[j] = reach;
                }
                gi += any ? 2 : 1;
            } else {
                for (int j = 0; j < s.length(); j++) {
                    next[j + 1] = at[j] && s.charAt(j) == c;
                }
                gi++;
            }
            at = next;
        }
        return at[s.length()];
    }
}
