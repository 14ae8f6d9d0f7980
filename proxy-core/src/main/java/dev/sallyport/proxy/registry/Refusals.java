package dev.sallyport.proxy.registry;

import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.RegistryReasons;
import java.nio.charset.StandardCharsets;

/**
 * The words of a registry refusal, written so that the package manager shows them: npm prints the {@code error}
 * field of a JSON body after its status line, pip prints the status line's reason phrase.
 */
public final class Refusals {

    private Refusals() {}

    /** One line: what was refused, why, and which key says so. */
    public static String message(Registry registry, String packageName, String version, String reason) {
        String what = version == null ? packageName : packageName + (registry.ecosystem() == Ecosystem.NPM ? "@" : "==")
                + version;
        String why = switch (reason) {
            case RegistryReasons.RELEASE_TOO_NEW -> "published less than min_release_age ("
                    + registry.minReleaseAgeText() + ") ago";
            case RegistryReasons.RELEASE_TIME_UNKNOWN -> "no publish time in its document, and min_release_age is set";
            case RegistryReasons.KNOWN_MALICIOUS -> "named by an OSV record in the advisories folder";
            case RegistryReasons.PACKAGE_NOT_ALLOWED -> "not allowed by the allow/deny lists";
            case RegistryReasons.VERSION_NOT_ALLOWED -> "outside the versions the allow/deny lists pin";
            case RegistryReasons.INSTALL_SCRIPT_ADDED -> "adds install scripts its previous version did not have";
            case RegistryReasons.PROVENANCE_DROPPED -> "has no provenance, though every earlier version had";
            case RegistryReasons.VERSION_UNKNOWN -> "not listed by its package document";
            default -> "refused";
        };
        return "sallyport: " + what + " refused by registry '" + registry.name() + "': " + reason + " (" + why + ")";
    }

    /**
     * One line for npm's {@code npm-notice} response header (npm prints it as {@code npm notice ...}), naming the
     * versions a document was filtered of and why: a client pinning one of them then sees why it is missing.
     */
    public static String notice(Registry registry, String packageName, java.util.List<VersionVerdict> refused) {
        StringBuilder b = new StringBuilder("sallyport: registry '").append(registry.name()).append("' hides ")
                .append(refused.size()).append(refused.size() == 1 ? " version of " : " versions of ")
                .append(packageName).append(':');
        int shown = 0;
        for (VersionVerdict v : refused) {
            if (shown == 10) {
                b.append(" and ").append(refused.size() - shown).append(" more");
                break;
            }
            b.append(shown++ == 0 ? " " : ", ").append(v.version()).append(' ').append(v.reason());
        }
        return b.toString().replaceAll("[^\\x20-\\x7e]", "?");
    }

    /** The body: JSON with an {@code error} field for npm, the line for PyPI. */
    public static byte[] body(Registry registry, String message) {
        String text = registry.ecosystem() == Ecosystem.NPM ? "{\"error\":" + jsonString(message) + "}\n"
                : message + "\n";
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static String contentType(Registry registry) {
        return registry.ecosystem() == Ecosystem.NPM ? "application/json" : "text/plain; charset=utf-8";
    }

    private static String jsonString(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
