package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
                .contains("--ro-bind " + etc.resolve("hostname") + " /etc/hostname")
                .contains("--ro-bind " + etc.resolve("ssh") + " /etc/ssh")
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

    @Test
    void theDenyListIsInTheReadme() throws Exception {
        String readme = Files.readString(Path.of("../README.md"));
        for (String entry : EtcMounts.DENIED) {
            assertThat(readme).as(entry).contains("`" + entry + "`");
        }
    }
}
