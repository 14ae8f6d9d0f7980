package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The sandbox's {@code /etc}: every entry of the host's, read-only, except what holds secrets. Each top-level entry
 * is bound onto itself (a symbolic link is made again as the same link, so it resolves inside the sandbox), then
 * every entry of {@link #DENIED} that exists here, and every entry that others may not read (a folder: read and
 * search), is masked: an empty read-only file over a file, an empty read-only folder over a folder. The command
 * never runs as root, so a file only root can read is unreadable anyway; the masks also cover what its groups
 * could read ({@code ssl-cert}, {@code shadow}) and secrets left readable by everyone. Last, the sandbox's trust
 * bundle is bound over every distribution bundle path that exists here ({@link TrustFiles#DISTRO_BUNDLES}), so a
 * program that reads only its distribution's file trusts the proxy's CA too.
 */
public final class EtcMounts {
    static final Path ETC = Path.of("/etc");
    /** The sandbox's own files: bound by {@link BwrapCommand} from the runtime folder instead of the host's. */
    static final List<String> OWN = List.of("resolv.conf", "hosts", "passwd", "group");
    /**
     * Entries below {@code /etc} that hold secrets or name the host's accounts, masked where they exist. A {@code *}
     * in the last name matches any characters. README.md (the sandbox section) lists them.
     */
    public static final List<String> DENIED = List.of(
            // accounts, passwords and privileges
            "shadow", "shadow-", "gshadow", "gshadow-", "passwd-", "group-", "subuid", "subuid-", "subgid",
            "subgid-", ".pwd.lock", "security/opasswd", "sudoers", "sudoers.d", "doas.conf",
            // the machine's identity and host keys
            "machine-id", "ssh/ssh_host_*_key",
            // TLS private keys
            "ssl/private", "pki/tls/private", "pki/CA/private", "pki/nssdb", "letsencrypt", "cups/ssl", "dkimkeys",
            "opendkim/keys",
            // Kerberos
            "krb5.keytab", "krb5kdc", "gssproxy",
            // network and VPN credentials
            "NetworkManager/system-connections", "wpa_supplicant", "ipsec.secrets", "ipsec.d/private",
            "strongswan/ipsec.secrets", "strongswan/ipsec.d/private", "strongswan/swanctl", "swanctl",
            "ppp/*-secrets", "ppp/peers", "openvpn", "wireguard", "netbird", "nebula", "tinc",
            // containers, clusters, virtual machines
            "docker", "containerd", "containers/auth.json", "buildkit", "kubernetes", "rancher", "libvirt",
            // storage
            "exports", "exports.d", "fstab", "crypttab", "cryptsetup-keys.d", "davfs2/secrets", "samba/smbpasswd",
            // services' credentials: mail, directories, databases, CI runners, configuration management, clouds
            "msmtprc", "ssmtp", "fetchmailrc", "exim4/passwd.client", "postfix/sasl_passwd*", "nslcd.conf",
            "ldap.secret", "libnss-ldap.secret", "pam_ldap.secret", "sssd", "ldap/slapd.d", "openldap/slapd.d",
            "mysql/debian.cnf", "redis", "snmp/snmpd.conf", "bind", "unbound/*.key", "gitlab", "gitlab-runner",
            "buildkite-agent", "vault.d", "consul.d", "nomad.d", "salt/pki", "puppetlabs/puppet/ssl", "puppet/ssl",
            "chef", "boto.cfg", "apt/auth.conf", "apt/auth.conf.d", "sallyport",
            // names that say what they hold, at the top level
            "*secret*", "*credential*", "*token*", "*.keytab", "*.key");

    private EtcMounts() {
    }

    /**
     * bwrap arguments for the whole of {@code /etc} (from the host's {@code etc}, normally {@link #ETC}): the
     * entries, the masks, then the trust bundle over the distribution paths.
     */
    static List<String> args(Path etc, Path emptyFile, Path emptyDir, Path bundle) throws IOException {
        List<String> args = new ArrayList<>(List.of("--dir", ETC.toString()));
        List<Path> masked = masked(etc);
        List<Path> entries;
        try (var list = Files.list(etc)) {
            entries = list.sorted().toList();
        }
        for (Path entry : entries) {
            String inside = ETC.resolve(entry.getFileName().toString()).toString();
            if (OWN.contains(entry.getFileName().toString()) || masked.contains(entry)) {
                continue;
            }
            if (Files.isSymbolicLink(entry)) {
                args.addAll(List.of("--symlink", Files.readSymbolicLink(entry).toString(), inside));
            } else {
                args.addAll(List.of("--ro-bind", entry.toString(), inside));
            }
        }
        for (Path mask : masked) {
            args.addAll(List.of("--ro-bind", (Files.isDirectory(mask, LinkOption.NOFOLLOW_LINKS) ? emptyDir
                    : emptyFile).toString(), ETC.resolve(etc.relativize(mask).toString()).toString()));
        }
        for (Path distro : distroBundles(etc)) {
            if (masked.stream().anyMatch(m -> distro.startsWith(ETC.resolve(etc.relativize(m).toString())))) {
                continue;
            }
            args.addAll(List.of("--ro-bind", bundle.toString(), distro.toString()));
        }
        return args;
    }

    /**
     * What is masked, outermost first: the {@link #DENIED} entries that exist and every entry others cannot read,
     * each once, nothing inside an entry already masked; an entry that is a symbolic link is masked where it leads
     * when that lies in {@code /etc} (inside the sandbox the link leads to the mask).
     */
    public static List<Path> masked(Path etc) throws IOException {
        Set<Path> found = new LinkedHashSet<>();
        for (String pattern : DENIED) {
            for (Path p : matches(etc, pattern)) {
                Path real = Files.isSymbolicLink(p) ? realOrNull(p) : p;
                if (real != null && real.startsWith(etc) && !real.equals(etc)) {
                    found.add(real);
                }
            }
        }
        List<Path> unreadable = new ArrayList<>();
        Files.walkFileTree(etc, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (dir.equals(etc)) {
                    return FileVisitResult.CONTINUE;
                }
                if (found.contains(dir) || !othersMay(dir, true)) {
                    unreadable.add(dir);
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (!attrs.isSymbolicLink() && !othersMay(file, false)) {
                    unreadable.add(file);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                // a folder this user cannot list: masked, others could not read it either
                unreadable.add(file);
                return FileVisitResult.CONTINUE;
            }
        });
        found.addAll(unreadable);
        List<Path> outermost = new ArrayList<>();
        for (Path p : found.stream().sorted().toList()) {
            if (outermost.stream().noneMatch(p::startsWith)) {
                outermost.add(p);
            }
        }
        return outermost;
    }

    /** The distribution bundle paths that exist here, each as the file it is (links followed), in {@code /etc}. */
    static List<Path> distroBundles(Path etc) {
        Set<Path> out = new LinkedHashSet<>();
        for (Path distro : TrustFiles.DISTRO_BUNDLES) {
            Path here = etc.resolve(ETC.relativize(distro).toString());
            Path real = realOrNull(here);
            if (real != null && real.startsWith(etc) && Files.isRegularFile(real)) {
                out.add(ETC.resolve(etc.relativize(real).toString()));
            }
        }
        return List.copyOf(out);
    }

    /** The entries below {@code etc} that {@code pattern} names ({@code *} only in its last name). */
    private static List<Path> matches(Path etc, String pattern) throws IOException {
        Path relative = Path.of(pattern);
        Path parent = relative.getParent() == null ? etc : etc.resolve(relative.getParent().toString());
        String last = relative.getFileName().toString();
        if (!last.contains("*")) {
            Path p = parent.resolve(last);
            return Files.exists(p, LinkOption.NOFOLLOW_LINKS) ? List.of(p) : List.of();
        }
        if (!Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS) || !Files.isReadable(parent)) {
            return List.of();
        }
        PathMatcher glob = FileSystems.getDefault().getPathMatcher("glob:" + last);
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(parent)) {
            for (Path p : dir) {
                if (glob.matches(p.getFileName())) {
                    out.add(p);
                }
            }
        }
        return out;
    }

    /** Whether users other than the owner and group may read {@code p} (and search it, a folder). */
    private static boolean othersMay(Path p, boolean folder) throws IOException {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        return perms.contains(PosixFilePermission.OTHERS_READ)
                && (!folder || perms.contains(PosixFilePermission.OTHERS_EXECUTE));
    }

    private static Path realOrNull(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return null;
        }
    }
}
