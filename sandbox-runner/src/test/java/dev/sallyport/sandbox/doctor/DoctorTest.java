package dev.sallyport.sandbox.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The doctor on this very machine; every expectation is derived from an independent look at the host. */
class DoctorTest {

    static final HostShell SHELL = new HostShell(Duration.ofSeconds(20));

    @Test
    void linesMatchWhatThisHostHas() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = Doctor.forHost().print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();

        assertThat(lines).hasSize(10).allMatch(l -> l.startsWith("ok   ") || l.startsWith("warn ")
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

    @Test
    void versionTokens() {
        assertThat(Doctor.version("nftables v1.0.6 (Lester Gooch #5)")).isEqualTo("1.0.6");
        assertThat(Doctor.version("nerdctl version 2.1.3")).isEqualTo("2.1.3");
        assertThat(Doctor.version("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1")).isEqualTo("1.6.20~ds1");
        assertThat(Doctor.version("bubblewrap 0.8.0")).isEqualTo("0.8.0");
    }
}
