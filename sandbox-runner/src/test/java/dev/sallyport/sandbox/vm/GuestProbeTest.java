package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.testing.Prerequisites;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/** The probe script runs here for real (in /bin/sh on the host, and in an empty network namespace). */
class GuestProbeTest {

    static final HostShell SHELL = new HostShell(Duration.ofSeconds(30));

    static GuestProbe.Result runScript(List<String> prefix, String gateway, int port) throws Exception {
        List<String> argv = new java.util.ArrayList<>(prefix);
        argv.addAll(List.of("/bin/sh", "-c", GuestProbe.script(gateway, port)));
        CommandResult result = SHELL.capture(new HostCommand(argv, null, false));
        return GuestProbe.parse(result.stdout(), gateway + ":" + port);
    }

    @Test
    void reachesAListeningProxy() throws Exception {
        try (ServerSocket proxy = new ServerSocket()) {
            proxy.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            GuestProbe.Result result = runScript(List.of(), "127.0.0.1", proxy.getLocalPort());

            assertThat(result).isInstanceOf(GuestProbe.Result.Reached.class);
            assertThat(((GuestProbe.Result.Reached) result).interfaces()).isNotEmpty().doesNotContain("lo");
        }
    }

    @Test
    void reportsAProxyThatDoesNotListen() throws Exception {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort();
        }
        GuestProbe.Result result = runScript(List.of(), "127.0.0.1", closedPort);

        assertThat(result).isInstanceOf(GuestProbe.Result.Unreachable.class);
        assertThat(result.message()).startsWith("probe: guest interfaces [")
                .contains("cannot open a TCP connection to the proxy at 127.0.0.1:" + closedPort);
    }

    @Test
    void reportsAGuestWithOnlyLoopback() throws Exception {
        Prerequisites.requireRoot("a network namespace the test makes");
        String ns = "sp-probe-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        CommandResult added = SHELL.capture(HostCommand.tolerant("ip", "netns", "add", ns));
        Prerequisites.require("network namespaces", added.exit() == 0, added.firstErrorLine());
        try {
            // sysfs must be remounted to show the namespace's interfaces: 'ip netns exec' does that.
            GuestProbe.Result result = runScript(List.of("ip", "netns", "exec", ns), "10.213.7.1", 3128);

            assertThat(result).isInstanceOf(GuestProbe.Result.NoInterface.class);
            assertThat(result.message()).startsWith("probe: the guest has no network interface besides lo");
        } finally {
            SHELL.capture(HostCommand.tolerant("ip", "netns", "del", ns));
        }
    }

    @Test
    void warnsWhenTheGuestHasNoRouteToTheSyntheticPrefix() throws Exception {
        Prerequisites.requireRoot("a network namespace the test makes");
        String ns = "sp-probe-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        CommandResult added = SHELL.capture(HostCommand.tolerant("ip", "netns", "add", ns));
        Prerequisites.require("network namespaces", added.exit() == 0, added.firstErrorLine());
        try {
            SHELL.capture(HostCommand.of("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "eth1"));
            SHELL.capture(HostCommand.of("ip", "-n", ns, "addr", "add", "10.213.7.2/24", "dev", "eth0"));
            SHELL.capture(HostCommand.of("ip", "-n", ns, "link", "set", "eth0", "up"));
            SHELL.capture(HostCommand.of("ip", "-n", ns, "link", "set", "eth1", "up"));
            SHELL.capture(HostCommand.of("ip", "-n", ns, "link", "set", "lo", "up"));
            // the proxy check goes to the namespace's own address: refused at once
            List<String> argv = List.of("ip", "netns", "exec", ns, "/bin/sh", "-c",
                    GuestProbe.script("10.213.7.2", 3128));

            assertThat(GuestProbe.routeWarning(SHELL.capture(new HostCommand(argv, null, true)).stdout()))
                    .as("the subnet's route only").hasValueSatisfying(warning -> assertThat(warning)
                            .startsWith("probe: the guest has no route to 198.18.0.0/15"));

            SHELL.capture(HostCommand.of("ip", "-n", ns, "route", "add", "198.18.0.0/15", "via", "10.213.7.1"));
            assertThat(GuestProbe.routeWarning(SHELL.capture(new HostCommand(argv, null, true)).stdout())).isEmpty();
        } finally {
            SHELL.capture(HostCommand.tolerant("ip", "netns", "del", ns));
        }
    }

    @Test
    void parsesEveryOutcome() {
        assertThat(GuestProbe.parse("sallyport-probe interfaces: eth0\nsallyport-probe proxy: untested via none\n", "g"))
                .isEqualTo(new GuestProbe.Result.Untested(List.of("eth0")));
        assertThat(GuestProbe.parse("sallyport-probe interfaces: eth0 eth1\nsallyport-probe proxy: ok via nc\n", "g"))
                .isEqualTo(new GuestProbe.Result.Reached(List.of("eth0", "eth1"), "nc"));
        assertThat(GuestProbe.parse("exec: /bin/sh: not found\n", "g"))
                .isEqualTo(new GuestProbe.Result.Failed("exec: /bin/sh: not found"));
        assertThat(GuestProbe.parse("sallyport-probe interfaces: eth0\n", "g"))
                .isEqualTo(new GuestProbe.Result.Failed("the proxy check did not finish"));
    }

}
