package dev.sallyport.proxy.mitm;

/**
 * The SNI check of one tunnel's ClientHello, where the first refusal stands. Netty's peek can ask again about the
 * same hello: a refusal given at once leaves the hello in its decoder, and when more of it has arrived it may then
 * read another name (a hello whose lengths disagree). Without this, a tunnel refused for one name could be
 * accepted, and dialed or minted for, by the next. One instance per tunnel, used on its event loop only.
 */
final class SniVerdict {

    private final String host;
    private /* @Nullable */ SniRefused refused;

    SniVerdict(String host) {
        this.host = host;
    }

    /** Null when {@code sni} is acceptable for the tunnel and nothing was refused before, else the refusal. */
    /* @Nullable */ SniRefused check(/* @Nullable */ String sni) {
        if (refused == null) {
            refused = SniRefused.check(sni, host);
        }
        return refused;
    }
}
