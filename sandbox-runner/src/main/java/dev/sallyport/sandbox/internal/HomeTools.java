package dev.sallyport.sandbox.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The tools the caller runs from the home folder, which the sandbox otherwise hides: for each entry of the caller's
 * {@code PATH} (and the command's folder, when it is given as a path) that lies in the home folder, the folder the
 * tool needs is shown read-only, and the entry stays on the sandbox's {@code PATH}. Which folder:
 * <ul>
 *   <li>a version manager's whole root ({@link #MANAGERS}: {@code ~/.pyenv}, {@code ~/.sdkman}, ...), since its
 *       shims run its own scripts and read its version files;</li>
 *   <li>{@code ~/.nvm/versions/node/VERSION} for a Node of nvm's;</li>
 *   <li>{@code ~/.cargo/bin} and {@code ~/.rustup} (rustup's toolchains, which its proxies in {@code ~/.cargo/bin}
 *       run), never the rest of {@code ~/.cargo} (its {@code credentials.toml});</li>
 *   <li>otherwise the entry itself ({@code ~/.local/bin}, {@code ~/bin}, {@code ~/go/bin}).</li>
 * </ul>
 * A folder that is the home itself, holds one of {@link #SECRETS} or lies in one is never shown: it is skipped
 * with a notice naming {@code --allow-read}.
 */
public final class HomeTools {
    /** Version managers whose whole root (the first name under the home) their shims need. */
    static final List<String> MANAGERS = List.of(".pyenv", ".rbenv", ".nodenv", ".goenv", ".jenv", ".asdf", ".volta",
            ".sdkman", ".bun", ".deno", ".rustup");
    /** What in a home folder holds credentials, keys or Sallyport's own state: never shown, nor what holds it. */
    static final List<String> SECRETS = List.of(".ssh", ".aws", ".azure", ".gnupg", ".password-store", ".docker",
            ".kube", ".netrc", ".git-credentials", ".gitconfig", ".npmrc", ".pypirc", ".m2", ".gradle", ".ivy2",
            ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d", ".vault-token",
            ".config/gh", ".config/hub", ".config/gcloud", ".config/git", ".config/op", ".config/rclone",
            ".config/composer/auth.json", ".config/sallyport", ".local/share", ".mozilla", ".thunderbird");

    /**
     * What to show and the resulting {@code PATH}.
     *
     * @param shown   folders to show read-only, in the order found
     * @param path    the sandbox's {@code PATH}: the caller's entries that are visible inside, in their order, then
     *                {@link SandboxEnvironment#DEFAULT_PATH}'s missing ones
     * @param notices one line on what was shown, one per entry skipped
     */
    public record Plan(List<Path> shown, String path, List<String> notices) {
        public Plan {
            shown = List.copyOf(shown);
            notices = List.copyOf(notices);
        }
    }

    private HomeTools() {
    }

    /**
     * Plans for the caller's environment {@code hostEnv} ({@code PATH}, {@code SALLYPORT_HOME}), the command, the
     * home folder and what is visible anyway ({@code visible}: the workspace and the grants).
     */
    public static Plan plan(Map<String, String> hostEnv, String command, Path home, List<Path> visible) {
        List<Path> secrets = new ArrayList<>(SECRETS.stream().map(home::resolve).toList());
        Optional.ofNullable(hostEnv.get("SALLYPORT_HOME")).filter(s -> s.startsWith("/"))
                .map(s -> Path.of(s).normalize()).ifPresent(secrets::add);
        Path realHome = real(home);
        if (!realHome.equals(home)) {
            SECRETS.forEach(name -> secrets.add(realHome.resolve(name)));
        }
        Planner planner = new Planner(home, visible, secrets);
        String callerPath = hostEnv.get("PATH");
        if (callerPath != null) {
            for (String entry : callerPath.split(":", -1)) {
                if (entry.startsWith("/")) {
                    planner.consider(Path.of(entry).normalize(), true);
                }
            }
        }
        if (command.startsWith("/") && Path.of(command).normalize().getParent() != null) {
            planner.consider(Path.of(command).normalize().getParent(), false);
        }
        for (String entry : SandboxEnvironment.DEFAULT_PATH.split(":")) {
            if (!planner.path.contains(entry)) {
                planner.path.add(entry);
            }
        }
        if (!planner.shown.isEmpty()) {
            planner.notices.addFirst("shown read-only from the home folder for the tools on PATH: " + String.join(
                    ", ", planner.shown.stream().map(Path::toString).toList()) + " (--allow-read FOLDER shows more)");
        }
        return new Plan(List.copyOf(planner.shown), String.join(":", planner.path), planner.notices);
    }

    /** What {@link #plan} gathers, entry by entry. */
    private static final class Planner {
        private final Path home;
        private final List<Path> visible;
        private final List<Path> secrets;
        private final Set<Path> shown = new LinkedHashSet<>();
        private final List<String> notices = new ArrayList<>();
        private final List<String> path = new ArrayList<>();

        Planner(Path home, List<Path> visible, List<Path> secrets) {
            this.home = home;
            this.visible = visible;
            this.secrets = secrets;
        }

        /** One folder: a {@code PATH} entry ({@code onPath}) or the command's own folder. */
        void consider(Path entry, boolean onPath) {
            if (entry.startsWith(home) && visible.stream().noneMatch(entry::startsWith)) {
                if (!Files.isDirectory(entry)) {
                    return;
                }
                List<Path> roots = roots(home, entry);
                // a link is judged where it leads too: ~/bin -> ~/.ssh shows ~/.ssh
                Optional<String> refused = roots.stream().flatMap(r -> Stream.of(r, real(r)))
                        .flatMap(r -> refusal(home, r, secrets).stream()).findFirst();
                if (refused.isPresent()) {
                    String line = (onPath ? "PATH entry " : "the command's folder ") + entry + " is not shown: "
                            + refused.get() + " (expected: a tool folder; --allow-read FOLDER shows one)";
                    if (!notices.contains(line)) {
                        notices.add(line);
                    }
                    return;
                }
                roots.stream().filter(Files::isDirectory).forEach(shown::add);
            }
            if (onPath && !path.contains(entry.toString())) {
                path.add(entry.toString());
            }
        }
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (java.io.IOException e) {
            return p;
        }
    }

    /** The folders a tool in {@code entry} needs (see the class comment). */
    static List<Path> roots(Path home, Path entry) {
        Path relative = home.relativize(entry);
        String first = relative.getName(0).toString();
        if (MANAGERS.contains(first)) {
            return List.of(home.resolve(first));
        }
        if (first.equals(".nvm") && relative.getNameCount() >= 4 && relative.subpath(1, 3).equals(Path.of("versions/node"))) {
            return List.of(home.resolve(relative.subpath(0, 4)));
        }
        if (relative.equals(Path.of(".cargo/bin"))) {
            return List.of(entry, home.resolve(".rustup"));
        }
        return List.of(entry);
    }

    /** Why {@code root} must not be shown, or empty. */
    private static Optional<String> refusal(Path home, Path root, List<Path> secrets) {
        if (root.equals(home) || root.equals(real(home))) {
            return Optional.of("it is the home folder, which holds secrets");
        }
        for (Path secret : secrets) {
            if (root.startsWith(secret)) {
                return Optional.of("it lies in " + secret + ", which holds secrets");
            }
            if (secret.startsWith(root)) {
                return Optional.of("it holds " + secret + ", which holds secrets");
            }
        }
        return Optional.empty();
    }
}
