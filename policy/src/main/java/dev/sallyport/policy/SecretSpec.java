package dev.sallyport.policy;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One entry of {@code secrets}: a value that the sandbox sees only as a placeholder and that the proxy
 * swaps in, only on requests to {@code hosts}, only in {@code headers}, and only on requests that go to the
 * upstream over TLS unless {@code allowCleartext}.
 *
 * @param placeholder    nullable: a fixed placeholder; null means the proxy generates one
 * @param require        when true, requests to the secret's hosts without the placeholder are refused
 * @param lazy           when true, the value is read on first use instead of at start
 * @param allowCleartext when true, the value is also injected into requests that go upstream in cleartext
 *                       (plain {@code http://}); when false (the default) such a request is refused
 * @param elsewhere      what a request to the secret's own hosts that carries the placeholder anywhere but a listed
 *                       header (the body, the URL, another header, an encoded form) gets: the placeholder
 *                       forwarded unchanged (the default) or the request refused; toward any other host it is
 *                       always refused
 * @param clients        the identities whose requests may carry the placeholder ({@code clients:}; empty: any):
 *                       from any other client it is refused ({@code secret_wrong_client}) and never swapped
 */
public record SecretSpec(String name, int line, SecretSource from, List<HostPattern> hosts, List<String> headers,
                         String placeholder, boolean require, boolean lazy, boolean allowCleartext,
                         Elsewhere elsewhere, Set<String> clients) {

    /**
     * {@code elsewhere_on_own_hosts}: a placeholder on the secret's own hosts outside its listed headers, where it is
     * never swapped (so it is harmless text there: an agent resending a conversation that quotes it).
     */
    public enum Elsewhere {
        /** Sent on unchanged, still the placeholder, and audited ({@code placeholders_forwarded}). */
        FORWARD,
        /** The request is refused, {@code secret_wrong_place}. */
        REFUSE;

        /** What the policy file says. */
        public String yaml() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** A secret whose placeholder is forwarded unchanged outside its listed headers on its own hosts (the default). */
    public SecretSpec(String name, int line, SecretSource from, List<HostPattern> hosts, List<String> headers,
                      String placeholder, boolean require, boolean lazy, boolean allowCleartext) {
        this(name, line, from, hosts, headers, placeholder, require, lazy, allowCleartext, Elsewhere.FORWARD);
    }

    /** A secret for every client. */
    public SecretSpec(String name, int line, SecretSource from, List<HostPattern> hosts, List<String> headers,
                      String placeholder, boolean require, boolean lazy, boolean allowCleartext, Elsewhere elsewhere) {
        this(name, line, from, hosts, headers, placeholder, require, lazy, allowCleartext, elsewhere, Set.of());
    }

    public SecretSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(elsewhere, "elsewhere");
        if (!isEnvName(name)) {
            throw new IllegalArgumentException("name: '" + name
                    + "' (expected: an environment variable name, [A-Za-z_][A-Za-z0-9_]*)");
        }
        hosts = List.copyOf(hosts);
        headers = List.copyOf(headers);
        clients = Set.copyOf(clients);
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("secret '" + name + "': hosts empty (expected: at least one)");
        }
        if (headers.isEmpty()) {
            throw new IllegalArgumentException("secret '" + name + "': headers empty (expected: at least one)");
        }
        for (String h : headers) {
            if (!isHeaderNameToken(h)) {
                throw new IllegalArgumentException("secret '" + name + "': header '" + h
                        + "' (expected: a header name token)");
            }
        }
        if (placeholder != null && !isPlaceholderText(placeholder)) {
            throw new IllegalArgumentException("secret '" + name
                    + "': placeholder (expected: 16..256 printable ASCII characters, no spaces)");
        }
    }

    /** This secret with {@code fixed} as its placeholder. */
    public SecretSpec withPlaceholder(String fixed) {
        return new SecretSpec(name, line, from, hosts, headers, fixed, require, lazy, allowCleartext, elsewhere,
                clients);
    }

    /** Whether requests of {@code client} (an identity name, {@link Identities#ANONYMOUS} for none) may use it. */
    public boolean usableBy(String client) {
        return clients.isEmpty() || clients.contains(client);
    }

    /** Never shows the placeholder's neighbours or any value; names only. */
    @Override
    public String toString() {
        return "SecretSpec[name=" + name + ", line=" + line + ", from=" + from + ", hosts=" + hosts
                + ", headers=" + headers + ", require=" + require + ", lazy=" + lazy + ", allowCleartext="
                + allowCleartext + ", elsewhere=" + elsewhere.yaml() + ", clients=" + clients + "]";
    }

    static boolean isEnvName(String s) {
        if (s.isEmpty() || s.length() > 128 || Character.isDigit(s.charAt(0))) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
                return false;
            }
        }
        return true;
    }

    /** True for an HTTP header name token. */
    public static boolean isHeaderNameToken(String s) {
        if (s.isEmpty() || s.length() > 128) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean tchar = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!tchar) {
                return false;
            }
        }
        return true;
    }

    /** True for a usable fixed placeholder: 16..256 printable ASCII characters, no spaces. */
    public static boolean isPlaceholderText(String s) {
        if (s.length() < 16 || s.length() > 256) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return false;
            }
        }
        return true;
    }
}
