package dev.sallyport.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Finds bubblewrap ({@code bwrap}), the helper that creates the sandbox's namespaces, and reads its version. */
public final class BubblewrapProbe {
    /** The install hint printed when bwrap is missing. */
    public static final String INSTALL_HINT = "apt-get install bubblewrap";
    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)(?:\\.(\\d+))?");

    /** A usable bwrap. */
    public record Bubblewrap(Path path, String version, int major, int minor) {
        /** {@code --disable-userns} exists since bubblewrap 0.8.0. */
        public boolean supportsDisableUserns() {
            return major > 0 || minor >= 8;
        }

        /** {@code --overlay-src} and {@code --tmp-overlay} exist since bubblewrap 0.9.0. */
        public boolean supportsOverlay() {
            return major > 0 || minor >= 9;
        }

        /** {@code --size} for a tmpfs exists since bubblewrap 0.7.0. */
        public boolean supportsSize() {
            return major > 0 || minor >= 7;
        }
    }

    private BubblewrapProbe() {
    }

    /** Looks for {@code bwrap} on {@code $PATH} (then /usr/bin) and runs {@code bwrap --version}. */
    public static Optional<Bubblewrap> find() {
        for (Path candidate : candidates()) {
            if (Files.isExecutable(candidate)) {
                Optional<Bubblewrap> found = version(candidate);
                if (found.isPresent()) {
                    return found;
                }
            }
        }
        return Optional.empty();
    }

    /** Like {@link #find()}, failing with the install hint. */
    public static Bubblewrap require() throws SandboxException {
        return find().orElseThrow(() -> new SandboxException("bwrap: not found on PATH (expected: bubblewrap 0.4 or "
                + "newer; install it with '" + INSTALL_HINT + "')"));
    }

    /**
     * Tries the namespaces the sandbox needs ({@code bwrap --unshare-all ... true}); empty when that works, else
     * bwrap's error with a hint. Ubuntu 24.04's AppArmor userns restriction shows up here as
     * {@code setting up uid map: Permission denied} or {@code loopback: Failed RTM_NEWADDR}.
     */
    public static Optional<String> tryNamespaces(Bubblewrap bwrap) {
        try {
            Process p = new ProcessBuilder(bwrap.path().toString(), "--unshare-all", "--die-with-parent",
                    "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                    "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/true")
                    .redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.of("bwrap: namespace check did not finish in 20 s (expected: an immediate exit)");
            }
            if (p.exitValue() == 0) {
                return Optional.empty();
            }
            return Optional.of("bwrap: cannot create namespaces: " + out.replace('\n', ' ') + " (expected: "
                    + "unprivileged user namespaces; on Ubuntu 24.04+ allow them for bwrap with an AppArmor profile "
                    + "or sysctl kernel.apparmor_restrict_unprivileged_userns=0; in containers, a seccomp profile "
                    + "that permits unshare)");
        } catch (IOException e) {
            return Optional.of("bwrap: cannot run " + bwrap.path() + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("bwrap: namespace check interrupted");
        }
    }

    private static Iterable<Path> candidates() {
        java.util.List<Path> paths = new java.util.ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                if (!dir.isEmpty()) {
                    paths.add(Path.of(dir, "bwrap"));
                }
            }
        }
        paths.add(Path.of("/usr/bin/bwrap"));
        return paths;
    }

    private static Optional<Bubblewrap> version(Path bwrap) {
        try {
            Process p = new ProcessBuilder(bwrap.toString(), "--version").redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readNBytes(4096);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.empty();
            }
            String text = new String(out, StandardCharsets.UTF_8).trim();
            Matcher m = VERSION.matcher(text);
            if (p.exitValue() != 0 || !m.find()) {
                return Optional.empty();
            }
            return Optional.of(new Bubblewrap(bwrap, m.group(), Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
