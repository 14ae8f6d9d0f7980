package dev.sallyport.sandbox.doctor;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A release number's first three parts, for "at least" checks: {@code 2.1.4}, {@code 1.6.20~ds1} reads as 1.6.20.
 */
record Version(int major, int minor, int patch) {

    private static final Pattern LEADING = Pattern.compile("v?([0-9]+)\\.([0-9]+)(?:\\.([0-9]+))?.*");

    /** The version at the start of {@code text}, if it starts with one. */
    static Optional<Version> parse(String text) {
        Matcher matcher = LEADING.matcher(text.strip());
        if (!matcher.matches()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Version(Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2)),
                    matcher.group(3) == null ? 0 : Integer.parseInt(matcher.group(3))));
        } catch (NumberFormatException tooLong) {
            return Optional.empty();
        }
    }

    boolean atLeast(Version other) {
        if (major != other.major) {
            return major > other.major;
        }
        if (minor != other.minor) {
            return minor > other.minor;
        }
        return patch >= other.patch;
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }
}
