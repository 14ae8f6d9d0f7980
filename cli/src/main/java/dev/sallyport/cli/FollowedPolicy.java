package dev.sallyport.cli;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;

/**
 * The policy of a proxy this command line starts: the built-in one, or a file the proxy reads again to follow
 * changes. A pipe ({@code <(...)}) or a device can be read only once, so it is refused in one line.
 */
final class FollowedPolicy {

    private FollowedPolicy() {}

    /** The built-in policy when {@code file} is null, else {@code file} loaded; {@code option} names it in errors. */
    static Policy load(String option, Path file) throws PolicyException {
        if (file == null) {
            return Policy.defaults();
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new UsageException(option + ": " + file + " is not a regular file (expected: a policy file; the "
                    + "proxy reads it again to follow changes, which a pipe or device cannot give)");
        }
        return PolicyLoader.load(file);
    }
}
