package dev.sallyport.proxy.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.IpAddress;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * The pool's bound on idle connections in all: beyond it the connection parked longest ago is closed, so a
 * workload that reaches many distinct hosts cannot make the proxy hold an idle connection for each of them.
 */
class UpstreamPoolTest {

    static final IpAddress LOOPBACK = IpAddress.parseStrict("127.0.0.1").orElseThrow();

    /** A channel as the pool gets one: with its (in step) HTTP codec. */
    static EmbeddedChannel channel() {
        return new EmbeddedChannel(new UpstreamCodec(new io.netty.handler.codec.http.HttpDecoderConfig()));
    }

    static UpstreamPool.Key key(EmbeddedChannel ch, String host) {
        return new UpstreamPool.Key(ch.eventLoop(), host, 443, true);
    }

    @Test
    void beyondTheBoundTheOldestParkedConnectionIsClosed() {
        UpstreamPool pool = new UpstreamPool(2);
        EmbeddedChannel a = channel();
        EmbeddedChannel b = channel();
        EmbeddedChannel c = channel();
        pool.offer(key(a, "a.test"), a, LOOPBACK);
        pool.offer(key(b, "b.test"), b, LOOPBACK);
        pool.offer(key(c, "c.test"), c, LOOPBACK);

        assertThat(a.isOpen()).as("parked longest ago").isFalse();
        assertThat(b.isOpen()).isTrue();
        assertThat(c.isOpen()).isTrue();
        assertThat(pool.size()).isEqualTo(2);
        assertThat(pool.poll(key(a, "a.test"))).isNull();

        UpstreamPool.Idle taken = pool.poll(key(c, "c.test"));
        assertThat(taken.channel()).isSameAs(c);
        assertThat(pool.size()).isEqualTo(1);

        b.close();   // the server closed it while parked
        assertThat(pool.size()).isZero();
        assertThat(pool.poll(key(b, "b.test"))).isNull();
    }

    @Test
    void aTakenConnectionIsNoLongerCountedOrEvicted() {
        UpstreamPool pool = new UpstreamPool(1);
        EmbeddedChannel a = channel();
        pool.offer(key(a, "a.test"), a, LOOPBACK);
        assertThat(pool.poll(key(a, "a.test")).channel()).isSameAs(a);
        EmbeddedChannel b = channel();
        pool.offer(key(b, "b.test"), b, LOOPBACK);
        assertThat(a.isOpen()).as("in use, not parked: never the oldest parked").isTrue();
        assertThat(pool.size()).isEqualTo(1);
    }
}
