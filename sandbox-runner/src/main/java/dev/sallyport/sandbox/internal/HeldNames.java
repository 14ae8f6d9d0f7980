package dev.sallyport.sandbox.internal;

import dev.sallyport.policy.SandboxSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Tool configs the host obeys the next time the user works in the folder (package managers, toolchain pins, commit
 * hook runners, environment loaders): the one table ({@link #BUILT_IN}), extended by the policy's
 * {@code sandbox.hold}. The command may write them; after the run {@link HeldConfigs} puts back what was there and
 * keeps what the command wrote in the held store ({@link dev.sallyport.sandbox.Held}) until the user accepts it.
 * A name matches in every folder of the workspace but inside {@code node_modules}.
 */
public final class HeldNames {

    /** One held name: a relative path (components separated by {@code /}) and what on the host obeys it. */
    public record Name(String path, String why) {
        public Name {
            SandboxSettings.checkHold(Objects.requireNonNull(path, "path"));
            Objects.requireNonNull(why, "why");
        }

        String last() {
            return path.substring(path.lastIndexOf('/') + 1);
        }

        boolean matches(Path relative) {
            return matches(relative, path.split("/"), path.split("/").length);
        }

        /** Whether the first {@code count} of {@code parts} are the last components of {@code relative}. */
        static boolean matches(Path relative, String[] parts, int count) {
            int n = relative.getNameCount();
            if (n < count) {
                return false;
            }
            for (int i = 0; i < count; i++) {
                if (!relative.getName(n - count + i).toString().equals(parts[i])) {
                    return false;
                }
            }
            return true;
        }
    }

    /** The built-in table; README.md's "Held tool configs" lists the same names. */
    public static final List<Name> BUILT_IN = List.of(
            new Name(".npmrc", "npm and pnpm take registries, scripts and the shell for scripts from it"),
            new Name(".yarnrc", "yarn 1 takes registries and the yarn binary to run from it"),
            new Name(".yarnrc.yml", "yarn runs the yarnPath it names and takes registries and plugins from it"),
            new Name(".pnpmfile.cjs", "pnpm runs its hooks on every install"),
            new Name("bunfig.toml", "bun preloads the scripts and takes the registries it names"),
            new Name(".cargo/config.toml", "cargo runs the runners, wrappers and registries it names"),
            new Name(".cargo/config", "cargo runs the runners, wrappers and registries it names"),
            new Name("rust-toolchain.toml", "rustup installs and runs the toolchain it names"),
            new Name("rust-toolchain", "rustup installs and runs the toolchain it names"),
            new Name(".pre-commit-config.yaml", "pre-commit installs and runs its hooks on git commit"),
            new Name("lefthook.yml", "lefthook runs its commands on git commit and push"),
            new Name(".lefthook.yml", "lefthook runs its commands on git commit and push"),
            new Name(".mvn/jvm.config", "mvn starts its JVM with these options (agents included)"),
            new Name(".mvn/maven.config", "mvn takes these options on every build"),
            new Name(".mvn/extensions.xml", "mvn loads the extensions it names into every build"),
            new Name(".mvn/wrapper/maven-wrapper.properties", "mvnw downloads and runs the Maven it names"),
            new Name("gradle/wrapper/gradle-wrapper.properties", "gradlew downloads and runs the Gradle it names"),
            new Name(".mise.toml", "mise installs the tools, sets the environment and runs the hooks it names"),
            new Name("mise.toml", "mise installs the tools, sets the environment and runs the hooks it names"),
            new Name(".mise.local.toml", "mise installs the tools, sets the environment and runs the hooks it names"),
            new Name(".tool-versions", "asdf and mise install and run the tool versions it names"),
            new Name(".envrc", "direnv runs it in the user's shell"),
            new Name("uv.toml", "uv takes package indexes and Python downloads from it"),
            new Name("pip.conf", "pip in a virtual environment takes package indexes from it"),
            new Name(".bundle/config", "bundler takes gem sources and install paths from it"));

    private final List<Name> names;
    private final Map<String, List<Name>> byLast = new HashMap<>();

    private HeldNames(List<Name> names) {
        this.names = List.copyOf(names);
        for (Name n : this.names) {
            byLast.computeIfAbsent(n.last(), k -> new ArrayList<>()).add(n);
        }
    }

    /** The built-in table and {@code extra} (the policy's {@code sandbox.hold}). */
    public static HeldNames with(List<String> extra) {
        List<Name> all = new ArrayList<>(BUILT_IN);
        for (String path : extra) {
            if (all.stream().noneMatch(n -> n.path().equals(path))) {
                all.add(new Name(path, "named in the policy's sandbox.hold"));
            }
        }
        return new HeldNames(all);
    }

    /** Every name, the built-in ones first. */
    public List<Name> names() {
        return names;
    }

    /**
     * For a symbolic link at {@code relative}: the held name whose folder it stands in for ({@code .cargo} of
     * {@code .cargo/config.toml}), as a name of its own; null when it stands in for none. A tool opening that folder
     * would follow the link to a config the walk never sees under a held name.
     */
    Name holder(Path relative) {
        for (Name n : names) {
            String[] parts = n.path().split("/");
            for (int count = 1; count < parts.length; count++) {
                if (Name.matches(relative, parts, count)) {
                    return new Name(String.join("/", java.util.Arrays.copyOf(parts, count)), "a link in its place "
                            + "points tools at a config elsewhere (" + n.why() + ")");
                }
            }
        }
        return null;
    }

    /** The name {@code relative} (a path inside the workspace, its last component {@code last}) matches, or null. */
    Name match(Path relative, String last) {
        List<Name> candidates = byLast.get(last);
        if (candidates == null) {
            return null;
        }
        for (Name n : candidates) {
            if (n.matches(relative)) {
                return n;
            }
        }
        return null;
    }
}
