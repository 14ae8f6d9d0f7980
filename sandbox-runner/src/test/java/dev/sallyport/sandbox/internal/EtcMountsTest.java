package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.BubblewrapProbe;
import dev.sallyport.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What of an {@code /etc} the sandbox shows, on a made-up one (the host's own is never changed): every entry bound
 * read-only except the sandbox's own files, links made again as links, the deny list and what others cannot read
 * masked by their kind, the trust bundle over the distribution paths. {@code SandboxEtcTest} attacks the real one.
 */
class EtcMountsTest {
    @TempDir
    Path etc;

    @Test
    void everyEntryIsShownButTheSecretsWhichAreMaskedByTheirKind() throws Exception {
        Files.writeString(etc.resolve("hostname"), "box\n");
        Files.writeString(etc.resolve("wgetrc"), "# defaults\n");
        Files.writeString(etc.resolve("passwd"), "root:x:0:0::/root:/bin/sh\n");
        Files.createSymbolicLink(etc.resolve("mtab"), Path.of("../proc/self/mounts"));
        Files.writeString(etc.resolve("shadow"), "root:$6$secret:1::::::\n");
        Files.writeString(etc.resolve("machine-id"), "0123456789abcdef\n");
        Files.createDirectories(etc.resolve("ssh"));
        Files.writeString(etc.resolve("ssh/ssh_config"), "Host *\n");
        Files.writeString(etc.resolve("ssh/ssh_host_ed25519_key"), "PRIVATE\n");
        Files.writeString(etc.resolve("ssh/ssh_host_ed25519_key.pub"), "ssh-ed25519 AAAA\n");
        Files.createDirectories(etc.resolve("docker"));
        Files.writeString(etc.resolve("docker/daemon.json"), "{}\n");
        Files.writeString(etc.resolve("registry-token"), "t0ken\n");
        Files.createDirectories(etc.resolve("ppp"));
        Files.writeString(etc.resolve("ppp/chap-secrets"), "user * pass\n");
        Files.writeString(etc.resolve("ppp/options"), "lock\n");
        Files.createDirectories(etc.resolve("strongswan"));
        Files.writeString(etc.resolve("strongswan/ipsec.secrets"), ": PSK x\n");
        Files.createSymbolicLink(etc.resolve("ipsec.secrets"), etc.resolve("strongswan/ipsec.secrets"));
        Files.createDirectories(etc.resolve("default"));
        Files.setPosixFilePermissions(Files.writeString(etc.resolve("default/cacerts"), "x\n"),
                PosixFilePermissions.fromString("rw-------"));
        Files.createDirectories(etc.resolve("ssl/private"));
        Files.writeString(etc.resolve("ssl/private/server.key"), "KEY\n");
        Files.setPosixFilePermissions(etc.resolve("ssl/private"), PosixFilePermissions.fromString("rwx--x---"));
        Files.createDirectories(etc.resolve("ssl/certs"));
        Files.writeString(etc.resolve("ssl/certs/ca-certificates.crt"), "ROOTS\n");

        assertThat(EtcMounts.masked(etc)).containsExactly(etc.resolve("default/cacerts"), etc.resolve("docker"),
                etc.resolve("machine-id"), etc.resolve("ppp/chap-secrets"), etc.resolve("registry-token"),
                etc.resolve("shadow"), etc.resolve("ssh/ssh_host_ed25519_key"), etc.resolve("ssl/private"),
                etc.resolve("strongswan/ipsec.secrets"));

        List<String> args = EtcMounts.args(etc, Path.of("/run/sallyport/empty-file"), Path.of("/run/sallyport/empty"),
                Path.of("/run/sallyport/ca-bundle.pem"));
        String joined = String.join(" ", args);
        assertThat(joined).startsWith("--dir /etc ")
                .contains("--ro-bind-try " + etc.resolve("hostname") + " /etc/hostname")
                .contains("--ro-bind-try " + etc.resolve("ssh") + " /etc/ssh")
                .contains("--symlink ../proc/self/mounts /etc/mtab")
                .contains("--symlink " + etc.resolve("strongswan/ipsec.secrets") + " /etc/ipsec.secrets")
                .contains("--ro-bind /run/sallyport/empty-file /etc/shadow")
                .contains("--ro-bind /run/sallyport/empty-file /etc/ssh/ssh_host_ed25519_key")
                .contains("--ro-bind /run/sallyport/empty /etc/docker")
                .contains("--ro-bind /run/sallyport/empty /etc/ssl/private")
                .contains("--ro-bind /run/sallyport/empty-file /etc/ppp/chap-secrets")
                .endsWith("--ro-bind /run/sallyport/ca-bundle.pem /etc/ssl/certs/ca-certificates.crt")
                .as("the sandbox's own passwd replaces the host's").doesNotContain(etc.resolve("passwd").toString())
                .as("a masked entry is never bound itself").doesNotContain(etc.resolve("shadow").toString())
                .doesNotContain(etc.resolve("docker").toString());
    }

    @Test
    void aDistributionBundleThatIsALinkIsCoveredWhereItLeads() throws Exception {
        Path extracted = Files.createDirectories(etc.resolve("pki/ca-trust/extracted/pem"));
        Files.writeString(extracted.resolve("tls-ca-bundle.pem"), "ROOTS\n");
        Files.createDirectories(etc.resolve("pki/tls/certs"));
        Files.createSymbolicLink(etc.resolve("pki/tls/certs/ca-bundle.crt"),
                Path.of("../../ca-trust/extracted/pem/tls-ca-bundle.pem"));
        Files.createSymbolicLink(etc.resolve("pki/tls/cert.pem"), etc.resolve("pki/ca-trust/extracted/pem/tls-ca-bundle.pem"));
        assertThat(EtcMounts.distroBundles(etc)).containsExactly(
                Path.of("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"));
    }

    /**
     * Regression: {@code bwrap: Can't find source path /etc/login.defs.dpkg-new} failed a run while apt worked on
     * the host. Entries that vanish between the listing and bwrap's mounts are left out, and one whose name the
     * deny list names stays hidden even when the walk missed it, in a real bwrap.
     */
    @Test
    void anEntryGoneBeforeBwrapMountsItIsLeftOutAndADeniedNameTheWalkMissedStaysHidden(@TempDir Path runtime)
            throws Exception {
        Files.writeString(etc.resolve("hostname"), "box\n");
        Files.writeString(etc.resolve("login.defs.dpkg-new"), "# being unpacked\n");
        Files.createSymbolicLink(etc.resolve("localtime.dpkg-tmp"), Path.of("/usr/share/zoneinfo/UTC"));
        Files.writeString(etc.resolve("deploy-token"), "t0ken\n");
        Files.createDirectories(etc.resolve("ssl/private"));
        Files.writeString(etc.resolve("ssl/private/server.key"), "KEY\n");
        List<Path> entries;
        try (var list = Files.list(etc)) {
            entries = list.sorted().toList();
        }
        // after the listing: the token is gone while the walk looks, back after it; the link is gone for good
        Files.delete(etc.resolve("deploy-token"));
        Files.delete(etc.resolve("localtime.dpkg-tmp"));
        List<Path> masked = EtcMounts.masked(etc);
        Files.writeString(etc.resolve("deploy-token"), "t0ken\n");
        Path emptyFile = Files.createFile(runtime.resolve("empty-file"));
        Path emptyDir = Files.createDirectory(runtime.resolve("empty"));
        List<String> args = EtcMounts.args(etc, entries, masked, emptyFile, emptyDir, runtime.resolve("bundle.pem"));
        // after the arguments were made, before bwrap mounts: apt renames its new file into place
        Files.move(etc.resolve("login.defs.dpkg-new"), etc.resolve("login.defs"));

        String script = "ls -A /etc; echo ---; cat /etc/deploy-token /etc/ssl/private/server.key 2>/dev/null;"
                + " ls -A /etc/ssl/private";
        ExternalProcess.Result run = bwrap(args, script);
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stdout()).startsWith("hostname\nssl\n---\n").doesNotContain("t0ken").doesNotContain("KEY")
                .doesNotContain("login.defs").doesNotContain("localtime").doesNotContain("deploy-token");

        List<String> strict = args.stream().map(a -> a.equals("--ro-bind-try") ? "--ro-bind" : a).toList();
        ExternalProcess.Result before = bwrap(strict, "true");
        assertThat(before.stderr()).as("what a plain bind of the vanished entry does")
                .containsPattern("Can't find source path " + java.util.regex.Pattern.quote(etc.toString())
                        + "/(login\\.defs\\.dpkg-new|localtime\\.dpkg-tmp)");
    }

    @Test
    void aTopLevelNameIsDeniedByTheDenyListsPatternsWithoutAFolder() {
        assertThat(EtcMounts.deniedByName("deploy-token")).isTrue();
        assertThat(EtcMounts.deniedByName("shadow-")).isTrue();
        assertThat(EtcMounts.deniedByName("server.key")).isTrue();
        assertThat(EtcMounts.deniedByName("login.defs")).isFalse();
        assertThat(EtcMounts.deniedByName("private")).as("ssl/private names a folder below").isFalse();
    }

    /** {@code script} in a real bwrap whose {@code /etc} is made by {@code etcArgs}, the system folders read-only. */
    private static ExternalProcess.Result bwrap(List<String> etcArgs, String script) throws Exception {
        List<String> command = new ArrayList<>(List.of(BubblewrapProbe.require().path().toString(), "--unshare-user",
                "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/usr", "/usr"));
        for (String dir : BwrapCommand.SYSTEM_DIRS) {
            Path p = Path.of(dir);
            if (Files.isSymbolicLink(p)) {
                command.addAll(List.of("--symlink", Files.readSymbolicLink(p).toString(), dir));
            } else if (Files.isDirectory(p)) {
                command.addAll(List.of("--ro-bind", dir, dir));
            }
        }
        command.addAll(List.of("--proc", "/proc", "--dev", "/dev"));
        command.addAll(etcArgs);
        command.addAll(List.of("--", "/bin/sh", "-c", script));
        return ExternalProcess.run(Duration.ofSeconds(30), command, null);
    }

    @Test
    void theDenyListIsInTheReadme() throws Exception {
        String readme = Files.readString(Path.of("../README.md"));
        for (String entry : EtcMounts.DENIED) {
            assertThat(readme).as(entry).contains("`" + entry + "`");
        }
    }
}
