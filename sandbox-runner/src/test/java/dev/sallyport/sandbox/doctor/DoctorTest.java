package dev.sallyport.sandbox.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.testing.Prerequisites;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The doctor on this very machine; every expectation is derived from an independent look at the host. */
class DoctorTest {

    static final HostShell SHELL = new HostShell(Duration.ofSeconds(20));

    @Test
    void linesMatchWhatThisHostHas() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = Doctor.forHost().print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();

        assertThat(lines).hasSize(11).allMatch(l -> l.startsWith("ok   ") || l.startsWith("warn ")
                || l.startsWith("FAIL "));
        assertThat(lines).allMatch(l -> !l.startsWith("FAIL") || l.endsWith(")"), "every FAIL carries its fix");

        if (Executables.find("nft").isPresent()) {
            String version = SHELL.capture(HostCommand.of("nft", "--version")).stdout().split("\\s+")[1];
            assertThat(lines).contains("ok   nftables " + version.replaceFirst("^v", ""));
        } else {
            assertThat(lines).anyMatch(l -> l.startsWith("FAIL nftables: nft not found on PATH (fix: "));
        }
        if (Files.exists(Path.of("/dev/kvm"))) {
            assertThat(lines).anyMatch(l -> l.contains("/dev/kvm"));
        } else {
            assertThat(lines).anyMatch(l -> l.startsWith("FAIL /dev/kvm: not present (fix: enable hardware "
                    + "virtualization"));
        }
        if (!Files.exists(Path.of("/dev/vhost-vsock"))) {
            assertThat(lines).anyMatch(l -> l.startsWith("FAIL vhost-vsock: /dev/vhost-vsock not present")
                    && l.contains("(fix: modprobe vhost_vsock"));
        }
        if (Executables.find("nerdctl").isEmpty()) {
            assertThat(lines).anyMatch(l -> l.startsWith("FAIL nerdctl: nerdctl not found on PATH (fix: install "));
            assertThat(exit).isEqualTo(1);
        }
        if (Executables.find("bwrap").isPresent()) {
            CommandResult bwrap = SHELL.capture(HostCommand.of("bwrap", "--version"));
            assertThat(lines).contains("ok   bubblewrap " + bwrap.stdout().strip().split("\\s+")[1]);
        }
        if (Executables.find("containerd").isEmpty()) {
            assertThat(lines).anyMatch(l -> l.startsWith("FAIL containerd: containerd not found on PATH (fix: "));
        }
    }

    @Test
    void landlockAgreesWithTheKernelsLsmList() throws Exception {
        Path lsm = Path.of("/sys/kernel/security/lsm");
        Landlock.Probe probe = Landlock.probe();
        if (Files.isReadable(lsm)) {
            boolean listed = List.of(Files.readString(lsm).strip().split(",")).contains("landlock");
            assertThat(probe.abi().isPresent()).as(probe.reason()).isEqualTo(listed);
        }
        probe.abi().ifPresent(abi -> assertThat(abi).isBetween(1, 64));
    }

    @Test
    void kataShimIsResolvedThroughContainerdsPathAndNamed(@TempDir Path root) throws Exception {
        Path rs = root.resolve("opt/kata/runtime-rs/bin/containerd-shim-kata-v2");
        Files.createDirectories(rs.getParent());
        Files.writeString(rs, "#!/bin/sh\n");
        rs.toFile().setExecutable(true);
        Files.createDirectories(root.resolve("proc"));
        Doctor doctor = new Doctor(SHELL, root);

        assertThat(doctor.run()).filteredOn(c -> c.name().startsWith("kata shim")).singleElement()
                .satisfies(c -> assertThat(c.line()).isEqualTo("FAIL kata shim (io.containerd.kata.v2): installed at "
                        + rs + " but not on containerd's PATH (fix: ln -s " + rs
                        + " /usr/local/bin/containerd-shim-kata-v2)"));

        Path link = root.resolve("usr/local/bin/containerd-shim-kata-v2");
        Files.createDirectories(link.getParent());
        Files.createSymbolicLink(link, rs);
        assertThat(doctor.run()).filteredOn(c -> c.name().startsWith("kata shim")).singleElement()
                .satisfies(c -> assertThat(c.line()).isEqualTo("ok   kata shim (io.containerd.kata.v2) " + link
                        + " -> " + rs.toRealPath() + ", runtime-rs (Rust; the Kata 4 default)"));
    }

    /** A folder of stand-ins that print a version, as the real programs' {@code --version} do. */
    static Doctor.Programs standIns(Path bin, Map<String, String> versionOutputs) throws Exception {
        for (Map.Entry<String, String> program : versionOutputs.entrySet()) {
            Path file = Files.writeString(bin.resolve(program.getKey()), "#!/bin/sh\necho '" + program.getValue() + "'\n");
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        }
        return name -> Optional.of(bin.resolve(name)).filter(Files::isExecutable);
    }

    static Check check(Doctor doctor, String name) {
        return doctor.run().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "nerdctl | nerdctl version 2.1.3 | FAIL nerdctl: 2.1.3 is not 2.1.4 or later ('network create --internal' "
                    + "is missing: every run would fail) (fix: install nerdctl >= 2.1.4",
            "nerdctl | nerdctl version 1.7.7 | FAIL nerdctl: 1.7.7 is not 2.1.4",
            "nerdctl | nerdctl version 2.1.4 | ok   nerdctl 2.1.4",
            "nerdctl | nerdctl version v2.3.5 | ok   nerdctl 2.3.5",
            "containerd | containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1 | warn containerd: "
                    + "1.6.20~ds1 is older than 1.7.0, which nerdctl 2.x is no longer tested against (fix: use "
                    + "containerd >= 1.7.0",
            "containerd | containerd github.com/containerd/containerd/v2 v2.1.4 75cb2b7 | ok   containerd 2.1.4",
            "containerd | containerd containerd.io 1.7.27 05044ec | ok   containerd 1.7.27"})
    void versionsBelowWhatNerdctlNeedsOrIsTestedWithAreCaught(String program, String output, String line,
                                                              @TempDir Path bin, @TempDir Path root) throws Exception {
        Doctor doctor = new Doctor(SHELL, root, standIns(bin, Map.of(program, output)), null);

        assertThat(check(doctor, program).line()).startsWith(line);
    }

    @Test
    void absentProgramsFailWithTheirFix(@TempDir Path bin, @TempDir Path root) throws Exception {
        Doctor doctor = new Doctor(SHELL, root, standIns(bin, Map.of()), null);

        assertThat(check(doctor, "nerdctl").line()).startsWith("FAIL nerdctl: nerdctl not found on PATH (fix: "
                + "install nerdctl >= 2.1.4");
        assertThat(check(doctor, "containerd").line()).startsWith("FAIL containerd: containerd not found on PATH");
    }

    @Test
    void cniPluginsAreCheckedInTheFolderNerdctlWillUse(@TempDir Path bin, @TempDir Path root) throws Exception {
        Doctor.Programs programs = standIns(bin, Map.of("iptables", "iptables v1.8.9", "ip6tables", "ip6tables v1.8.9"));
        Path debian = plugins(root.resolve("usr/lib/cni"), Doctor.CNI_PLUGINS);
        Doctor doctor = new Doctor(SHELL, root, programs, null);

        assertThat(check(doctor, "CNI plugins").line()).isEqualTo("ok   CNI plugins /usr/lib/cni (the first of nerdctl's "
                + "CNI folders that exists): bridge, host-local, firewall, tuning, portmap; iptables, ip6tables");

        plugins(root.resolve("opt/cni/bin"), List.of("bridge", "host-local"));
        assertThat(check(doctor, "CNI plugins").line()).isEqualTo("FAIL CNI plugins: /opt/cni/bin (the first of "
                + "nerdctl's CNI folders that exists) lacks firewall, tuning, portmap (fix: install them there "
                + "(containernetworking-plugins, or nerdctl's 'full' bundle); /usr/lib/cni has them all: set "
                + "CNI_PATH=/usr/lib/cni for nerdctl or link them into /opt/cni/bin)");

        Doctor withCniPath = new Doctor(SHELL, root, programs, "/usr/lib/cni");
        assertThat(check(withCniPath, "CNI plugins").line()).startsWith("ok   CNI plugins /usr/lib/cni (CNI_PATH)");

        Doctor noIptables = new Doctor(SHELL, root, standIns(bin.resolve("none"), Map.of()), "/usr/lib/cni");
        assertThat(check(noIptables, "CNI plugins").line()).isEqualTo("FAIL CNI plugins: the firewall plugin runs "
                + "iptables and ip6tables, not found on PATH (fix: apt-get install iptables)");
        assertThat(debian).isDirectory();
    }

    @Test
    void anInputChainThatDropsByDefaultIsNamed(@TempDir Path bin, @TempDir Path root) throws Exception {
        Prerequisites.requireRoot("a network namespace with its own nftables ruleset");
        String ns = "sp-doctor-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
        SHELL.capture(HostCommand.of("ip", "netns", "add", ns));
        try {
            CommandRunner inNamespace = new InNamespace(ns);
            Doctor.Programs programs = name -> Executables.find(name);
            Doctor doctor = new Doctor(inNamespace, root, programs, null);
            assertThat(check(doctor, "host input firewall").line())
                    .isEqualTo("ok   host input firewall no input chain drops by default");

            inNamespace.capture(HostCommand.of("nft", "-f", "-").withStdin("""
                    table inet filter {
                    	chain input {
                    		type filter hook input priority filter; policy drop;
                    		ct state established accept
                    	}
                    }
                    table inet sallyport_ab12 {
                    	chain input {
                    		type filter hook input priority -100; policy drop;
                    	}
                    }
                    """));

            assertThat(check(doctor, "host input firewall").line()).isEqualTo("warn host input firewall: table inet "
                    + "filter chain input drops by default: it will also drop the sandboxes' connections to the proxy "
                    + "(TCP port 3128 on their bridges) (fix: accept TCP to port 3128 arriving on interfaces named br-* "
                    + "in that chain (nft: iifname \"br-*\" tcp dport 3128 accept; ufw: add '-A ufw-before-input -i "
                    + "br-+ -p tcp --dport 3128 -j ACCEPT' to /etc/ufw/before.rules))");
        } finally {
            SHELL.capture(HostCommand.tolerant("ip", "netns", "del", ns));
        }
    }

    /** Runs every command inside one network namespace ({@code ip netns exec}): its nftables ruleset is its own. */
    record InNamespace(String ns) implements CommandRunner {
        @Override
        public CommandResult capture(HostCommand command) throws java.io.IOException {
            List<String> argv = new java.util.ArrayList<>(List.of("ip", "netns", "exec", ns));
            argv.addAll(command.argv());
            return SHELL.capture(new HostCommand(argv, command.stdin(), command.mayFail()));
        }

        @Override
        public int interactive(HostCommand command) {
            throw new UnsupportedOperationException("the doctor runs nothing interactively");
        }

        @Override
        public boolean dryRun() {
            return false;
        }
    }

    private static Path plugins(Path dir, List<String> names) throws Exception {
        Files.createDirectories(dir);
        for (String name : names) {
            Path plugin = Files.writeString(dir.resolve(name), "#!/bin/sh\n");
            Files.setPosixFilePermissions(plugin, PosixFilePermissions.fromString("rwx------"));
        }
        return dir;
    }

    @Test
    void versionTokens() {
        assertThat(Doctor.version("nftables v1.0.6 (Lester Gooch #5)")).isEqualTo("1.0.6");
        assertThat(Doctor.version("nerdctl version 2.1.3")).isEqualTo("2.1.3");
        assertThat(Doctor.version("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1")).isEqualTo("1.6.20~ds1");
        assertThat(Doctor.version("bubblewrap 0.8.0")).isEqualTo("0.8.0");
        assertThat(Version.parse("1.6.20~ds1")).contains(new Version(1, 6, 20));
        assertThat(Version.parse("2.1")).contains(new Version(2, 1, 0));
        assertThat(Version.parse("(devel)")).isEmpty();
        assertThat(new Version(2, 1, 4).atLeast(Doctor.NERDCTL_MINIMUM)).isTrue();
        assertThat(new Version(2, 0, 9).atLeast(Doctor.NERDCTL_MINIMUM)).isFalse();
        assertThat(new Version(3, 0, 0).atLeast(Doctor.NERDCTL_MINIMUM)).isTrue();
    }
}
