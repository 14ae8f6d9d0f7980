package dev.sallyport.policy;

/**
 * Client identities: the names {@code clients:} lists on rules and secrets match. A sandbox gets one when its runner
 * registers it with a running proxy; a connection that carries none is {@link #ANONYMOUS}.
 */
public final class Identities {

    /** The identity of a client that presented none (a direct connection to the proxy's listener). */
    public static final String ANONYMOUS = "anonymous";

    /** What a name must look like (the text of {@code expected:} in messages). */
    public static final String EXPECTED = "1..64 of letters, digits, '.', '_' and '-', starting with a letter or digit";

    private Identities() {}

    /** 1..64 characters of {@code [A-Za-z0-9._-]}, the first a letter or digit. */
    public static boolean isValidName(String name) {
        if (name == null || name.isEmpty() || name.length() > 64 || !Character.isLetterOrDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                    || c == '_' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
