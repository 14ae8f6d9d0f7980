package dev.sallyport.sandbox.internal;

import dev.sallyport.sandbox.net.Executables;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The host's git identity for the sandbox: {@code user.name} and {@code user.email} from the invoking user's global
 * git config (under sudo: {@code SUDO_UID}'s), and nothing else of it (credential helpers, {@code url.insteadOf},
 * aliases stay on the host). The sandbox's {@code ~/.gitconfig} starts as these two keys ({@link Inside} copies the
 * file into the home folder, so {@code git config --global} still works inside and a repository's own identity
 * still wins, as on the host).
 */
public final class GitIdentity {
    /** The file in the runtime folder. */
    public static final String FILE = "gitconfig";
    /** Who commits inside when the host has no identity: a name that says where the commit was made. */
    public static final String DEFAULT_NAME = "Sallyport sandbox";
    /** The default identity's address, in a domain reserved never to exist ({@code .invalid}). */
    public static final String DEFAULT_EMAIL = "sandbox@sallyport.invalid";
    /** The gitconfig text of the default identity. */
    public static final String DEFAULT = "# no git identity on the host: commits made here say they were made in the "
            + "sandbox\n[user]\n\tname = " + DEFAULT_NAME + "\n\temail = " + DEFAULT_EMAIL + "\n";
    private static final List<String> KEYS = List.of("user.name", "user.email");
    private static final long TIMEOUT_SECONDS = 10;

    private GitIdentity() {
    }

    /**
     * The gitconfig text holding the identity, empty when git is missing or the user has none. {@code home} is the
     * caller's home folder; for a root runner's command that runs as sudo's caller, that user's home is read.
     */
    public static Optional<String> read(Path home, WorkloadUser user) {
        Optional<Path> git = Executables.find("git");
        if (git.isEmpty()) {
            return Optional.empty();
        }
        Path configHome = user instanceof WorkloadUser.Dropped d && d.why() == WorkloadUser.Why.SUDO
                ? HostAccounts.home(d.uid()).orElse(home) : home;
        Map<String, String> values = get(git.get(), configHome);
        if (values.isEmpty()) {
            return Optional.empty();
        }
        StringBuilder text = new StringBuilder("# the host's git identity, nothing else of its config\n[user]\n");
        for (String key : KEYS) {
            if (values.containsKey(key)) {
                text.append('\t').append(key.substring("user.".length())).append(" = \"")
                        .append(values.get(key).replace("\\", "\\\\").replace("\"", "\\\"")).append("\"\n");
            }
        }
        return Optional.of(text.toString());
    }

    /** {@link #KEYS} as {@code home}'s user's global config has them (no system file, no repository). */
    private static Map<String, String> get(Path git, Path home) {
        ProcessBuilder pb = new ProcessBuilder(git.toString(), "config", "--global", "--includes", "--get-regexp",
                "^user\\.(name|email)$").directory(home.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().clear();
        pb.environment().putAll(Map.of("HOME", home.toString(), "PATH", SandboxEnvironment.DEFAULT_PATH,
                "GIT_CONFIG_NOSYSTEM", "1", "GIT_CEILING_DIRECTORIES", "/"));
        Map<String, String> values = new LinkedHashMap<>();
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readNBytes(8192);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return values;
            }
            for (String line : new String(out, StandardCharsets.UTF_8).split("\n")) {
                int space = line.indexOf(' ');
                String key = space < 0 ? line : line.substring(0, space);
                String value = space < 0 ? "" : line.substring(space + 1).strip();
                if (KEYS.contains(key) && !value.isEmpty() && value.chars().noneMatch(c -> c < 0x20)) {
                    values.put(key, value);   // the last one wins, as for git
                }
            }
        } catch (IOException e) {
            return values;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return values;
    }
}
