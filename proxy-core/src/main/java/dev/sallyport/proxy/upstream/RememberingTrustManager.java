package dev.sallyport.proxy.upstream;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The upstream trust manager: the JDK's PKIX path validation with its HTTPS hostname check, remembering each
 * chain it accepted for a while. Another connection that presents the very same chain (another host under the
 * same wildcard or multi-name certificate, or the same host once its pooled connection has gone) then skips the
 * path building and signature checks, about a millisecond of CPU in Java per new upstream connection.
 *
 * <p>The host is still checked on every connection: a remembered chain is accepted only for a host that one of
 * its leaf's DNS names equals or matches by a leftmost wildcard of one label ({@code *.example.com} names
 * {@code a.example.com}, not {@code a.b.example.com} or {@code example.com}), and a wildcard only once the full
 * check has accepted it for some host. Anything else (an IP address, a leaf without DNS names, a name that does
 * not match) goes through the JDK's full check, which decides. Chains
 * are told apart by the SHA-256 of every certificate's encoding and the key exchange type; one is remembered for
 * at most {@link #REMEMBER}, never past the earliest end of validity in it, and only after the full check
 * accepted it. Revocation is not checked, with or without this.
 */
final class RememberingTrustManager extends X509ExtendedTrustManager {

    /** How long an accepted chain is remembered at most. */
    static final Duration REMEMBER = Duration.ofMinutes(10);
    private static final int MAX_CHAINS = 4_096;

    private final X509ExtendedTrustManager pkix;
    private final InstantSource clock;
    private final Cache<String, Accepted> accepted = Caffeine.newBuilder().maximumSize(MAX_CHAINS).build();

    /**
     * An accepted chain: until when it may be taken again, its leaf's DNS names (lower case), and the wildcard
     * names among them that the full check has accepted for some host (so a wildcard the JDK refuses, one for a
     * public suffix for instance, is never taken here).
     */
    private record Accepted(Instant until, List<String> dnsNames, Set<String> checkedWildcards) {

        boolean names(String host) {
            String matched = match(host, dnsNames);
            return matched != null && (!matched.startsWith("*") || checkedWildcards.contains(matched));
        }

        Accepted checkedFor(String host) {
            String matched = host == null ? null : match(host, dnsNames);
            if (matched == null || !matched.startsWith("*") || checkedWildcards.contains(matched)) {
                return this;
            }
            Set<String> wildcards = new HashSet<>(checkedWildcards);
            wildcards.add(matched);
            return new Accepted(until, dnsNames, Set.copyOf(wildcards));
        }
    }

    RememberingTrustManager(X509ExtendedTrustManager pkix, InstantSource clock) {
        this.pkix = pkix;
        this.clock = clock;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        String host = engine == null ? null : engine.getPeerHost();
        String key = key(chain, authType);
        Accepted known = accepted.getIfPresent(key);
        Instant now = clock.instant();
        if (known != null && host != null && now.isBefore(known.until()) && known.names(host)) {
            return;
        }
        pkix.checkServerTrusted(chain, authType, engine);   // throws when it does not accept the chain
        Accepted fresh = known != null && now.isBefore(known.until()) ? known
                : new Accepted(until(chain, now), dnsNames(chain[0]), Set.of());
        accepted.put(key, fresh.checkedFor(host));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        pkix.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        pkix.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        pkix.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        pkix.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        pkix.checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return pkix.getAcceptedIssuers();
    }

    /**
     * The one of {@code dnsNames} that names {@code host}: equal to it, or of the form {@code *.rest} where
     * {@code rest} has at least two labels and {@code host} is one label more; null when none does.
     * Case-insensitive ASCII names; an IP address is never named here.
     */
    static String match(String host, List<String> dnsNames) {
        String name = host.toLowerCase(Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (name.isEmpty() || name.indexOf(':') >= 0
                || name.chars().allMatch(c -> c == '.' || c >= '0' && c <= '9')) {
            return null;
        }
        for (String dns : dnsNames) {
            if (dns.equals(name)) {
                return dns;
            }
        }
        for (String dns : dnsNames) {
            if (dns.startsWith("*.") && dns.indexOf('*', 1) < 0) {
                String rest = dns.substring(1);   // ".example.com"
                if (rest.indexOf('.', 1) > 0 && name.length() > rest.length() && name.endsWith(rest)
                        && name.lastIndexOf('.', name.length() - rest.length() - 1) < 0) {
                    return dns;
                }
            }
        }
        return null;
    }

    private static String key(X509Certificate[] chain, String authType) throws CertificateException {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(String.valueOf(authType).getBytes(StandardCharsets.UTF_8));
            for (X509Certificate cert : chain) {
                byte[] der = cert.getEncoded();
                sha.update((byte) (der.length >>> 24));
                sha.update((byte) (der.length >>> 16));
                sha.update((byte) (der.length >>> 8));
                sha.update((byte) der.length);
                sha.update(der);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    private static Instant until(X509Certificate[] chain, Instant now) {
        Instant until = now.plus(REMEMBER);
        for (X509Certificate cert : chain) {
            Instant end = cert.getNotAfter().toInstant();
            if (end.isBefore(until)) {
                until = end;
            }
        }
        return until;
    }

    private static List<String> dnsNames(X509Certificate leaf) {
        List<String> names = new ArrayList<>();
        try {
            Collection<List<?>> alternatives = leaf.getSubjectAlternativeNames();
            if (alternatives != null) {
                for (List<?> entry : alternatives) {
                    if (entry.size() == 2 && Integer.valueOf(2).equals(entry.get(0))
                            && entry.get(1) instanceof String dns) {
                        names.add(dns.toLowerCase(Locale.ROOT));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            return List.of();   // then every connection takes the full check
        }
        return List.copyOf(names);
    }
}
