package dev.sallyport.proxy.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.benmanes.caffeine.cache.Ticker;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.identity.SandboxRegistry;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SyntheticAddressesTest {

    private static final InetAddress CLIENT = address("10.88.0.2");
    private static final InetAddress NEIGHBOUR = address("10.88.0.3");

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private final AtomicLong nanos = new AtomicLong(-Duration.ofDays(1).toNanos());   // a ticker may be negative
    private final Ticker clock = nanos::get;

    private void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    @Test
    void aNameKeepsItsAddressAndTheAddressNamesIt() {
        SyntheticAddresses pool = new SyntheticAddresses(8, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot a = pool.assign("a.test", CLIENT).orElseThrow();
        SyntheticAddresses.Slot b = pool.assign("b.test", CLIENT).orElseThrow();
        assertThat(a).isNotEqualTo(b);
        assertThat(pool.assign("a.test", CLIENT)).contains(a);
        assertThat(pool.nameFor(a.v4(), CLIENT)).contains("a.test");
        assertThat(pool.nameFor(a.v6(), CLIENT)).contains("a.test");
        assertThat(pool.nameFor(b.v4(), CLIENT)).contains("b.test");
        assertThat(a.v4().getHostAddress()).startsWith("198.18.");
        assertThat(SyntheticAddresses.isSynthetic(a.v6())).isTrue();
    }

    @Test
    void addressesOutsideThePrefixesAndUnassignedOnesNameNothing() throws Exception {
        SyntheticAddresses pool = new SyntheticAddresses(8, Duration.ofMinutes(10), clock);
        pool.assign("a.test", CLIENT);
        for (String other : new String[] {"198.17.255.255", "198.20.0.1", "127.0.0.1", "198.19.255.254", "::1",
            "fd5a:11b0:7f00:54::1", "fd5a:11b0:7f00:53::2:0:1"}) {
            assertThat(pool.nameFor(InetAddress.getByName(other), CLIENT)).as(other).isEmpty();
        }
    }

    @Test
    void anExpiredMappingNamesNothingAndItsAddressGoesToNoOtherNameSoon() {
        SyntheticAddresses pool = new SyntheticAddresses(4, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot a = pool.assign("a.test", CLIENT).orElseThrow();
        advance(Duration.ofMinutes(10));
        assertThat(pool.nameFor(a.v4(), CLIENT)).as("expired").isEmpty();
        advance(Duration.ofMinutes(11));
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            seen.add(pool.assign("n" + i + ".test", CLIENT).orElseThrow().index());
        }
        assertThat(seen).doesNotContain(a.index());
        assertThat(pool.nameFor(a.v4(), CLIENT)).isEmpty();
    }

    @Test
    void askingAgainKeepsTheMappingAlive() {
        SyntheticAddresses pool = new SyntheticAddresses(4, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot a = pool.assign("a.test", CLIENT).orElseThrow();
        for (int i = 0; i < 5; i++) {
            advance(Duration.ofMinutes(9));
            assertThat(pool.assign("a.test", CLIENT)).contains(a);
        }
        assertThat(pool.nameFor(a.v4(), CLIENT)).contains("a.test");
    }

    @Test
    void aFloodOfNamesIsRefusedInsteadOfTakingALivingNamesAddress() {
        SyntheticAddresses pool = new SyntheticAddresses(16, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot victim = pool.assign("victim.test", CLIENT).orElseThrow();
        int refused = 0;
        for (int i = 0; i < 10_000; i++) {
            if (pool.assign("flood-" + i + ".zone.test", CLIENT).isEmpty()) {
                refused++;
            }
        }
        assertThat(refused).isEqualTo(10_000 - 15);
        assertThat(pool.size()).isEqualTo(16);
        assertThat(pool.nameFor(victim.v4(), CLIENT)).contains("victim.test");
        assertThat(pool.assign("victim.test", CLIENT)).contains(victim);
        // even once everything expired, a freed slot is handed out only after the cursor came round
        advance(Duration.ofMinutes(25));
        SyntheticAddresses.Slot next = pool.assign("late.test", CLIENT).orElseThrow();
        assertThat(next.index()).isGreaterThan(victim.index() + 15);
    }

    @Test
    void aMappingIsOnlyGoodForTheClientsThatAskedForIt() {
        SyntheticAddresses pool = new SyntheticAddresses(8, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot a = pool.assign("a.test", CLIENT).orElseThrow();
        assertThat(pool.nameFor(a.v4(), NEIGHBOUR)).as("a neighbour that never asked").isEmpty();
        assertThat(pool.nameFor(a.v6(), NEIGHBOUR)).isEmpty();
        assertThat(pool.assign("a.test", NEIGHBOUR)).as("one address per name, whoever asks").contains(a);
        assertThat(pool.nameFor(a.v4(), NEIGHBOUR)).contains("a.test");
        assertThat(pool.nameFor(a.v4(), CLIENT)).contains("a.test");
    }

    @Test
    void aMappingForgetsItsLeastRecentClientBeyondItsBound() throws Exception {
        SyntheticAddresses pool = new SyntheticAddresses(8, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot a = pool.assign("a.test", CLIENT).orElseThrow();
        for (int i = 0; i < SyntheticAddresses.CLIENTS_PER_NAME; i++) {
            pool.assign("a.test", InetAddress.getByAddress(new byte[] {10, 89, (byte) (i >> 8), (byte) i}));
        }
        assertThat(pool.nameFor(a.v4(), CLIENT)).as("forgotten: it asks again").isEmpty();
        assertThat(pool.nameFor(a.v4(), InetAddress.getByAddress(new byte[] {10, 89, 0, 1}))).contains("a.test");
    }

    private static ClientIdentity sandbox(SandboxRegistry registry, String name) throws Exception {
        return registry.resolve(registry.register(name, name, java.util.List.of(), Duration.ofMinutes(5)).token())
                .orElseThrow();
    }

    @Test
    void aSandboxsMappingsAreItsOwnAndItsShareIsBounded() throws Exception {
        SandboxRegistry registry = new SandboxRegistry(java.time.InstantSource.system());
        ClientIdentity a = sandbox(registry, "a");
        ClientIdentity b = sandbox(registry, "b");
        SyntheticAddresses pool = new SyntheticAddresses(16, 4, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot mine = pool.assign("shared.test", a).orElseThrow();
        SyntheticAddresses.Slot theirs = pool.assign("shared.test", b).orElseThrow();
        assertThat(mine).as("one name, one address per sandbox").isNotEqualTo(theirs);
        assertThat(pool.nameFor(mine.v4(), a)).contains("shared.test");
        assertThat(pool.nameFor(mine.v4(), b)).as("the other's address").isEmpty();
        assertThat(pool.nameFor(mine.v4(), CLIENT)).as("a client known by address").isEmpty();
        assertThat(pool.assign("shared.test", CLIENT).orElseThrow()).isNotIn(mine, theirs);
        // a fills its share: it is refused, b still gets addresses, and none of a's is handed to b
        for (int i = 0; i < 10; i++) {
            pool.assign("flood-" + i + ".test", a);
        }
        assertThat(pool.assign("one-more.test", a)).isEmpty();
        SyntheticAddresses.Slot next = pool.assign("b-next.test", b).orElseThrow();
        assertThat(pool.nameFor(next.v4(), a)).isEmpty();
        assertThat(pool.nameFor(mine.v4(), a)).contains("shared.test");
    }

    @Test
    void aForgottenSandboxsMappingsGoAndItsShareIsFree() throws Exception {
        SandboxRegistry registry = new SandboxRegistry(java.time.InstantSource.system());
        ClientIdentity a = sandbox(registry, "a");
        SyntheticAddresses pool = new SyntheticAddresses(16, 2, Duration.ofMinutes(10), clock);
        SyntheticAddresses.Slot one = pool.assign("one.test", a).orElseThrow();
        assertThat(pool.assign("two.test", a)).isPresent();
        assertThat(pool.assign("three.test", a)).isEmpty();
        pool.forget(a);
        assertThat(pool.size()).isZero();
        assertThat(pool.nameFor(one.v4(), a)).isEmpty();
        ClientIdentity again = sandbox(new SandboxRegistry(java.time.InstantSource.system()), "a");
        assertThat(pool.assign("three.test", again)).isPresent();
        assertThat(pool.nameFor(one.v4(), again)).as("a new registration of the same name owns nothing").isEmpty();
    }

    /**
     * Sandboxes that fill their shares together cannot leave another nothing: each registered sandbox, one that has
     * asked for nothing yet included, keeps its reserve free until it holds it, and clients known by address get only
     * what no reserve holds. Without reserves, the first two sandboxes here took the whole table.
     */
    @Test
    void eachRegisteredSandboxKeepsItsReserveWhileOthersFloodTheTable() throws Exception {
        SandboxRegistry registry = new SandboxRegistry(java.time.InstantSource.system());
        ClientIdentity a = sandbox(registry, "a");
        ClientIdentity b = sandbox(registry, "b");
        ClientIdentity late = sandbox(registry, "late");
        SyntheticAddresses pool = new SyntheticAddresses(16, 8, 3, registry::size, Duration.ofMinutes(10), clock);
        int taken = 0;
        for (int i = 0; i < 8; i++) {
            taken += pool.assign("a-" + i + ".test", a).isPresent() ? 1 : 0;
            taken += pool.assign("b-" + i + ".test", b).isPresent() ? 1 : 0;
        }
        assertThat(taken).as("a's and b's floods: the table less late's reserve").isEqualTo(13);
        assertThat(pool.assign("stranger.test", CLIENT)).as("a client by address gets no reserved mapping").isEmpty();
        for (int i = 0; i < 3; i++) {
            assertThat(pool.assign("late-" + i + ".test", late)).as("late's name " + i).isPresent();
        }
        assertThat(pool.assign("late-3.test", late)).as("the table is full now").isEmpty();
        pool.forget(a);
        assertThat(pool.assign("late-3.test", late)).as("a's mappings went with it").isPresent();
    }

    @Test
    void boundsAreChecked() {
        assertThatThrownBy(() -> new SyntheticAddresses(0, Duration.ofMinutes(1), clock))
                .hasMessage("capacity: 0 (expected: 1..32768)");
        assertThatThrownBy(() -> new SyntheticAddresses(4, Duration.ZERO, clock))
                .hasMessage("lifetime: PT0S (expected: > 0)");
        assertThatThrownBy(() -> new SyntheticAddresses(4, 5, Duration.ofMinutes(1), clock))
                .hasMessage("perOwner: 5 (expected: 1..4)");
    }
}
