package dev.sallyport.policy;

import java.util.List;

/**
 * The {@code network} section: the networks the proxy never dials ({@code deny: default} expands to
 * {@link DefaultDeny#NETWORKS}), and the narrow exceptions of {@code allow_private}.
 */
public record NetworkSettings(List<Cidr> deny, List<PrivateException> allowPrivate) {

    public static final NetworkSettings DEFAULTS = new NetworkSettings(DefaultDeny.NETWORKS, List.of());

    public NetworkSettings {
        deny = List.copyOf(deny);
        allowPrivate = List.copyOf(allowPrivate);
    }
}
