package dev.sallyport.policy;

import java.util.List;

/**
 * The {@code network} section: the networks the proxy never dials ({@code deny: default} expands to
 * {@link DefaultDeny#NETWORKS}), the narrow exceptions of {@code allow_private}, and what {@code sallyport run}'s
 * capture does with literal addresses ({@code literal_addresses}).
 */
public record NetworkSettings(List<Cidr> deny, List<PrivateException> allowPrivate, LiteralAddresses literalAddresses) {

    public static final NetworkSettings DEFAULTS = new NetworkSettings(DefaultDeny.NETWORKS, List.of());

    public NetworkSettings {
        deny = List.copyOf(deny);
        allowPrivate = List.copyOf(allowPrivate);
        java.util.Objects.requireNonNull(literalAddresses, "literalAddresses");
    }

    /** Literal addresses not captured ({@link LiteralAddresses#NO_ROUTE}). */
    public NetworkSettings(List<Cidr> deny, List<PrivateException> allowPrivate) {
        this(deny, allowPrivate, LiteralAddresses.NO_ROUTE);
    }
}
