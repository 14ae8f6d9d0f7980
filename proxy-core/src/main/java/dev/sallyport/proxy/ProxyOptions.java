package dev.sallyport.proxy;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.audit.AuditKey;
import dev.sallyport.proxy.connect.OriginalDestination;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.inject.Placeholders;
import java.time.InstantSource;
import java.util.Objects;

/**
 * What {@link SallyportProxy#start} needs. Nullable fields fall back to the policy: {@code ca} null means the
 * policy's CA files (or the state directory), {@code resolver} null means the system resolver, {@code placeholders}
 * null means the placeholder key in the state directory (what {@code sallyport secrets env} prints), {@code auditKey}
 * null the audit signing key in the state directory (what {@code sallyport audit key} prints), {@code capture}
 * null means the policy's {@code proxy.dns} and {@code proxy.transparent}, if it names them, unless a listen override
 * is given (the caller then places this proxy, as a sandbox run does for its own: no listener of the policy's),
 * {@code clock} null the system clock.
 */
public record ProxyOptions(
        Policy policy,
        /* @Nullable */ CertificateAuthority ca,
        /* @Nullable */ HostPort listenOverride,
        /* @Nullable */ HostPort adminOverride,
        /* @Nullable */ ProxyEventListener extraListener,
        /* @Nullable */ Resolver resolver,
        /* @Nullable */ Placeholders placeholders,
        /* @Nullable */ AuditKey auditKey,
        /* @Nullable */ Capture capture,
        /* @Nullable */ InstantSource clock) {

    public ProxyOptions {
        Objects.requireNonNull(policy, "policy");
    }

    public static ProxyOptions of(Policy policy) {
        return new ProxyOptions(policy, null, null, null, null, null, null, null, null, null);
    }

    public ProxyOptions withCa(CertificateAuthority value) {
        return new ProxyOptions(policy, value, listenOverride, adminOverride, extraListener, resolver, placeholders,
                auditKey, capture, clock);
    }

    public ProxyOptions withListen(HostPort value) {
        return new ProxyOptions(policy, ca, value, adminOverride, extraListener, resolver, placeholders, auditKey,
                capture, clock);
    }

    public ProxyOptions withAdmin(HostPort value) {
        return new ProxyOptions(policy, ca, listenOverride, value, extraListener, resolver, placeholders, auditKey,
                capture, clock);
    }

    public ProxyOptions withListener(ProxyEventListener value) {
        return new ProxyOptions(policy, ca, listenOverride, adminOverride, value, resolver, placeholders, auditKey,
                capture, clock);
    }

    public ProxyOptions withResolver(Resolver value) {
        return new ProxyOptions(policy, ca, listenOverride, adminOverride, extraListener, value, placeholders,
                auditKey, capture, clock);
    }

    public ProxyOptions withPlaceholders(Placeholders value) {
        return new ProxyOptions(policy, ca, listenOverride, adminOverride, extraListener, resolver, value, auditKey,
                capture, clock);
    }

    /** The key that signs the audit log's checkpoints (tests; a run without a state folder). */
    public ProxyOptions withAuditKey(AuditKey value) {
        return new ProxyOptions(policy, ca, listenOverride, adminOverride, extraListener, resolver, placeholders,
                value, capture, clock);
    }

    /**
     * The wall clock the proxy reads (audit timestamps, certificate validity, secrets' files, registry release
     * ages); sandbox leases and timeouts run on the monotonic clock whatever this says. Tests move it.
     */
    public ProxyOptions withClock(InstantSource value) {
        return new ProxyOptions(policy, ca, listenOverride, adminOverride, extraListener, resolver, placeholders,
                auditKey, capture, value);
    }

    /** Also answers DNS on {@code value} (UDP and TCP, port 0 for any), A and AAAA, with no transparent listener. */
    public ProxyOptions withDns(HostPort value) {
        return withCapture(new Capture(value, null, true));
    }

    public ProxyOptions withCapture(Capture value) {
        return new ProxyOptions(policy, ca, listenOverride, adminOverride, extraListener, resolver, placeholders,
                auditKey, value, clock);
    }

    /**
     * The DNS stub, when {@code dns} is set, and the transparent listener, when {@code transparent} is: connections
     * whose original destination comes from {@code source}, where a synthetic address the stub gave stands for its
     * name.
     *
     * @param ipv6Answers whether the stub answers AAAA with a synthetic address (else an empty answer)
     */
    public record Capture(/* @Nullable */ HostPort dns, /* @Nullable */ HostPort transparent, boolean ipv6Answers,
                          OriginalDestination source) {
        public Capture {
            Objects.requireNonNull(source, "source");
            if (dns == null && transparent == null) {
                throw new IllegalArgumentException("capture: neither dns nor transparent (expected: one or both)");
            }
        }

        /** A DNS stub and a listener for connections that begin with a PROXY v2 header (the sandbox's relay). */
        public Capture(HostPort dns, /* @Nullable */ HostPort transparent, boolean ipv6Answers) {
            this(Objects.requireNonNull(dns, "dns"), transparent, ipv6Answers, OriginalDestination.PROXY_HEADER);
        }

        /**
         * The policy's {@code proxy.dns} and {@code proxy.transparent} (connections the host's nftables redirected;
         * AAAA answered only when the transparent listener has an IPv6 address, to questions asked over IPv6), if it
         * names either.
         */
        public static java.util.Optional<Capture> of(dev.sallyport.policy.ProxySettings proxy) {
            return proxy.dns() == null && proxy.transparent() == null ? java.util.Optional.empty()
                    : java.util.Optional.of(redirected(proxy.dns(), proxy.transparent()));
        }

        /**
         * A DNS stub and a listener for connections the host's nftables redirected to it (original destination from
         * connection tracking): what {@code proxy.dns} and {@code proxy.transparent} start, and what the VM backend's
         * table DNATs a guest's traffic to. AAAA is answered empty, unless the listener has an IPv6 address (a
         * network captured for IPv6 too): then questions asked over IPv6 get AAAA answers, those over IPv4 A answers.
         */
        public static Capture redirected(/* @Nullable */ HostPort dns, /* @Nullable */ HostPort transparent) {
            return new Capture(dns, transparent, transparent != null && transparent.host().contains(":"),
                    OriginalDestination.CONNECTION_TRACKING);
        }
    }
}
