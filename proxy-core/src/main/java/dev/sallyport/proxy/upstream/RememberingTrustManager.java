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
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The upstream trust manager: the JDK's PKIX path validation with its HTTPS hostname check, remembering each
 * chain it accepted for a while. Another connection that presents the very same chain (another host under the
 * same wildcard or multi-name certificate, or the same host once its pooled connection has gone) then skips the
 * path building and signature checks, about a millisecond of CPU in Java per new upstream connection.
 *
 * <p>The host is still checked on every connection: a remembered chain is accepted only for a plain lower-case
 * host name that one of its leaf's DNS names equals or matches by a leftmost wildcard of one label
 * ({@code *.example.com} names {@code a.example.com}, not {@code a.b.example.com} or {@code example.com}), and
 * only a name the full check has already accepted for some host. Anything else (an IP address, another spelling,
 * a leaf without DNS names, a name not yet checked) goes through the JDK's full check, which decides. Chains are
 * told apart by the SHA-256 of every certificate's encoding, the key exchange type and the TLS version; one is
 * remembered for at most {@link #REMEMBER} (a monotonic clock), never past the earliest end of validity in it,
 * and only after the full check accepted it. Revocation is not checked, with or without this.
 */
final class RememberingTrustManager extends X509ExtendedTrustManager {

    /** How long an accepted chain is remembered at most. */
    static final Duration REMEMBER = Duration.ofMinutes(10);
    private static final int MAX_CHAINS = 4_096;
    private static final Pattern HOST = Pattern.compile("[a-z0-9-]+(\\.[a-z0-9-]+)+");

    private final X509ExtendedTrustManager pkix;
    private final InstantSource clock;
    private final LongSupplier nanoTime;
    private final Cache<String, Accepted> accepted = Caffeine.newBuilder().maximumSize(MAX_CHAINS).build();

    /**
     * An accepted chain: until when it may be taken again (a monotonic deadline for {@link #REMEMBER} and the
     * earliest end of validity in it), its leaf's DNS names (lower case), and those of them the full check has
     * accepted for a host: only these are taken here, so a name the JDK would refuse (a wildcard for a public
     * suffix, for instance) is never accepted without it.
     */
    private record Accepted(long deadlineNanos, Instant notAfter, List<String> dnsNames, Set<String> checked) {

        boolean names(String host) {
            String matched = match(host, dnsNames);
            return matched != null && checked.contains(matched);
        }

        Accepted checkedFor(String host) {
            String matched = host == null ? null : match(host, dnsNames);
            if (matched == null || checked.contains(matched)) {
                return this;
            }
            Set<String> names = new HashSet<>(checked);
            names.add(matched);
            return new Accepted(deadlineNanos, notAfter, dnsNames, Set.copyOf(names));
        }
    }

    RememberingTrustManager(X509ExtendedTrustManager pkix, InstantSource clock, LongSupplier nanoTime) {
        this.pkix = pkix;
        this.clock = clock;
        this.nanoTime = nanoTime;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        String host = engine == null ? null : engine.getPeerHost();
        SSLSession session = engine == null ? null : engine.getHandshakeSession();
        String key = key(chain, authType + "/" + (session == null ? "" : session.getProtocol()));
        Accepted known = accepted.getIfPresent(key);
        if (known != null && !fresh(known)) {
            known = null;
        }
        if (known != null && host != null && known.names(host)) {
            return;
        }
        pkix.checkServerTrusted(chain, authType, engine);   // throws when it does not accept the chain
        Accepted base = known != null ? known : new Accepted(nanoTime.getAsLong() + REMEMBER.toNanos(),
                notAfter(chain), dnsNames(chain[0]), Set.of());
        accepted.put(key, base.checkedFor(host));
    }

    private boolean fresh(Accepted known) {
        return nanoTime.getAsLong() - known.deadlineNanos() < 0 && clock.instant().isBefore(known.notAfter());
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
     * {@code rest} has at least two labels and {@code host} is one label more; null when none does, and for
     * anything but a plain lower-case host name (letters, digits, hyphens; no trailing dot; not an address).
     */
    static String match(String host, List<String> dnsNames) {
        String name = host;
        if (!HOST.matcher(name).matches() || name.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))) {
            return null;   // not a plain lower-case host name: the full check decides
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

    private static Instant notAfter(X509Certificate[] chain) {
        Instant end = Instant.MAX;
        for (X509Certificate cert : chain) {
            Instant certEnd = cert.getNotAfter().toInstant();
            if (certEnd.isBefore(end)) {
                end = certEnd;
            }
        }
        return end;
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
