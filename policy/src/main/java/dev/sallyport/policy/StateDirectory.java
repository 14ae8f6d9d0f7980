package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.Map;

/** Where Sallyport keeps its state (the default CA): {@code $SALLYPORT_HOME}, else {@code ~/.local/share/sallyport}. */
public final class StateDirectory {

    private StateDirectory() {}

    public static Path resolve() {
        return resolve(System.getenv(), System.getProperty("user.home"));
    }

    /** The same, from a given environment and home folder (for tests). */
    public static Path resolve(Map<String, String> env, String userHome) {
        String home = env.get("SALLYPORT_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home).toAbsolutePath().normalize();
        }
        if (userHome == null || userHome.isBlank()) {
            throw new IllegalStateException("state directory: neither SALLYPORT_HOME nor user.home is set"
                    + " (expected: SALLYPORT_HOME=/some/folder)");
        }
        return Path.of(userHome, ".local", "share", "sallyport").toAbsolutePath().normalize();
    }
}
