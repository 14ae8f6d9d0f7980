package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.net.Executables;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Which keys of a repository's config the host's git may keep when the config was written in the sandbox: an
 * allow-list of what only describes the repository (format, remotes' URLs and refspecs, branches' upstreams,
 * identity, aliases that are git commands). Everything else goes, since so many keys make git run a program or
 * look elsewhere: {@code core.fsmonitor}, {@code core.hooksPath}, {@code core.sshCommand}, {@code core.pager},
 * {@code core.editor}, {@code core.worktree}, {@code filter.*}, {@code diff.*.textconv}, {@code merge.*.driver},
 * {@code include.path}, {@code includeIf.*}, {@code credential.*}, {@code url.*.insteadOf}, {@code http.*},
 * {@code protocol.*}, {@code remote.*.uploadpack}, {@code alias.X = !program}, {@code gpg.program}, ...
 * The file is read with the host's own git ({@code git config --file F --null --list}), so it is parsed exactly as
 * the host will parse it, and nothing in it runs ({@code --file} reads no includes and starts nothing).
 */
final class GitConfigFilter {
    private static final long TIMEOUT_SECONDS = 10;
    private static final Set<String> CORE = Set.of("repositoryformatversion", "filemode", "bare", "logallrefupdates",
            "ignorecase", "precomposeunicode", "symlinks", "autocrlf", "eol", "safecrlf", "sparsecheckout",
            "sparsecheckoutcone", "splitindex", "untrackedcache", "commitgraph", "multipackindex", "compression",
            "loosecompression", "bigfilethreshold", "abbrev", "quotepath", "checkstat", "trustctime", "preloadindex",
            "filesreflocktimeout", "packedrefstimeout", "warnambiguousrefs", "whitespace", "commentchar",
            "commentstring");
    private static final Set<String> REMOTE = Set.of("url", "pushurl", "fetch", "push", "mirror", "tagopt", "prune",
            "prunetags", "promisor", "partialclonefilter", "skipdefaultupdate", "skipfetchall");
    private static final Set<String> BRANCH = Set.of("remote", "pushremote", "merge", "rebase", "description");
    private static final Set<String> SUBMODULE = Set.of("url", "active", "branch", "ignore", "shallow",
            "fetchrecursesubmodules");
    private static final Map<String, Set<String>> PLAIN = Map.ofEntries(
            Map.entry("user", Set.of("name", "email")), Map.entry("init", Set.of("defaultbranch")),
            Map.entry("pull", Set.of("rebase", "ff")), Map.entry("push", Set.of("default", "autosetupremote",
                    "followtags")),
            Map.entry("fetch", Set.of("prune", "prunetags")), Map.entry("lfs", Set.of("repositoryformatversion")),
            Map.entry("index", Set.of("version")), Map.entry("gc", Set.of("auto")),
            Map.entry("merge", Set.of("conflictstyle", "ff")), Map.entry("rerere", Set.of("enabled", "autoupdate")),
            Map.entry("diff", Set.of("renames", "algorithm", "mnemonicprefix", "noprefix", "context",
                    "indentheuristic", "colormoved")));

    /** One entry as git lists it: {@code section[.subsection].name} (section and name lower case), and its value. */
    record Entry(String key, String value) {
        String section() {
            return key.substring(0, key.indexOf('.'));
        }

        String name() {
            return key.substring(key.lastIndexOf('.') + 1);
        }

        /** The subsection, case kept; null when there is none. */
        String subsection() {
            int first = key.indexOf('.');
            int last = key.lastIndexOf('.');
            return first == last ? null : key.substring(first + 1, last);
        }
    }

    private GitConfigFilter() {
    }

    /** The entries of {@code file} as the host's git reads them; empty when git is missing or refuses the file. */
    static Optional<List<Entry>> read(Path file) {
        Optional<Path> git = Executables.find("git");
        if (git.isEmpty()) {
            return Optional.empty();
        }
        ProcessBuilder pb = new ProcessBuilder(git.get().toString(), "config", "--file", file.toString(), "--no-includes",
                "--null", "--list").directory(Path.of("/").toFile()).redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().clear();
        pb.environment().putAll(Map.of("HOME", "/", "PATH", SandboxEnvironment.DEFAULT_PATH, "GIT_CONFIG_NOSYSTEM", "1",
                "GIT_CONFIG_GLOBAL", "/dev/null", "GIT_CEILING_DIRECTORIES", "/"));
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readNBytes(8 << 20);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.empty();
            }
            if (p.exitValue() != 0) {
                return Optional.empty();
            }
            List<Entry> entries = new ArrayList<>();
            for (String item : new String(out, StandardCharsets.UTF_8).split("\0")) {
                if (item.isEmpty()) {
                    continue;
                }
                int nl = item.indexOf('\n');
                entries.add(nl < 0 ? new Entry(item, null) : new Entry(item.substring(0, nl), item.substring(nl + 1)));
            }
            return Optional.of(entries);
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Whether the host's git may keep {@code e}. */
    static boolean allowed(Entry e) {
        String section = e.section();
        String name = e.name();
        String sub = e.subsection();
        return switch (section) {
            case "core" -> sub == null && CORE.contains(name);
            case "extensions", "advice", "color", "status", "log" -> true;
            case "remote" -> sub != null && REMOTE.contains(name);
            case "branch" -> sub != null && BRANCH.contains(name);
            case "submodule" -> sub != null && SUBMODULE.contains(name);
            case "alias" -> e.value() != null && !e.value().strip().startsWith("!");
            default -> sub == null && PLAIN.getOrDefault(section, Set.of()).contains(name);
        };
    }

    /** The config text holding {@code entries} in their order, one section header per run of the same section. */
    static String write(List<Entry> entries) {
        StringBuilder text = new StringBuilder();
        String current = null;
        for (Entry e : entries) {
            String header = e.subsection() == null ? "[" + e.section() + "]"
                    : "[" + e.section() + " \"" + e.subsection().replace("\\", "\\\\").replace("\"", "\\\"") + "\"]";
            if (!header.equals(current)) {
                text.append(header).append('\n');
                current = header;
            }
            text.append('\t').append(e.name());
            if (e.value() != null) {
                text.append(" = \"").append(e.value().replace("\\", "\\\\").replace("\"", "\\\"")
                        .replace("\n", "\\n").replace("\t", "\\t")).append('"');
            }
            text.append('\n');
        }
        return text.toString();
    }
}
