package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The sandbox's {@code /etc}: every entry of the host's, read-only, except what holds secrets. Each top-level entry
 * is bound onto itself (a symbolic link is made again as the same link, so it resolves inside the sandbox; one
 * that is gone by the time bwrap mounts it is left out: {@code /etc} changes while package managers work), then
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
     * entries, the masks, then the trust bundle over the distribution paths. The entries are listed before the
     * walk that finds the masks, so every entry bound was there for the walk to check.
     */
    static List<String> args(Path etc, Path emptyFile, Path emptyDir, Path bundle) throws IOException {
        List<Path> entries;
        try (var list = Files.list(etc)) {
            entries = list.sorted().toList();
        }
        return args(etc, entries, masked(etc), emptyFile, emptyDir, bundle);
    }

    /**
     * The same from a listing of {@code etc} ({@code entries}) and what {@link #masked} found after it. An entry
     * may vanish before bwrap mounts it (a package manager's {@code login.defs.dpkg-new} renamed into place):
     * entries are bound with {@code --ro-bind-try}, which skips a source that is gone, and a link that is gone
     * is left out. An entry of the listing whose name the deny list names is never bound, even when the walk no
     * longer found it (gone then, and back since). The masks and the trust bundle come from the runtime folder,
     * so they are never skipped: a mask bwrap cannot place (its target gone from a folder bound read-only) fails
     * the run instead of leaving anything unmasked.
     */
    static List<String> args(Path etc, List<Path> entries, List<Path> masked, Path emptyFile, Path emptyDir,
                             Path bundle) {
        List<String> args = new ArrayList<>(List.of("--dir", ETC.toString()));
        for (Path entry : entries) {
            String name = entry.getFileName().toString();
            String inside = ETC.resolve(name).toString();
            boolean link = Files.isSymbolicLink(entry);
            if (OWN.contains(name) || masked.contains(entry) || (!link && deniedByName(name))) {
                continue;
            }
            if (link) {
                readLinkIfThere(entry).ifPresent(target -> args.addAll(List.of("--symlink", target, inside)));
            } else {
                args.addAll(List.of("--ro-bind-try", entry.toString(), inside));
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

    /** Whether a top-level entry of this name is one the deny list names (a pattern without a folder). */
    static boolean deniedByName(String name) {
        for (String pattern : DENIED) {
            if (pattern.indexOf('/') < 0
                    && FileSystems.getDefault().getPathMatcher("glob:" + pattern).matches(Path.of(name))) {
                return true;
            }
        }
        return false;
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
                // gone since it was listed: nothing to mask (args binds only what is still there); else a folder
                // this user cannot list: masked, others could not read it either
                if (!(e instanceof NoSuchFileException)) {
                    unreadable.add(file);
                }
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
        } catch (NoSuchFileException gone) {
            return List.of();
        }
        return out;
    }

    /**
     * Whether users other than the owner and group may read {@code p} (and search it, a folder); true when it is
     * gone since it was listed (nothing left to mask).
     */
    private static boolean othersMay(Path p, boolean folder) throws IOException {
        Set<PosixFilePermission> perms;
        try {
            perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException gone) {
            return true;
        }
        return perms.contains(PosixFilePermission.OTHERS_READ)
                && (!folder || perms.contains(PosixFilePermission.OTHERS_EXECUTE));
    }

    /** Where the link {@code p} leads, or empty when it is gone since it was listed. */
    private static Optional<String> readLinkIfThere(Path p) {
        try {
            return Optional.of(Files.readSymbolicLink(p).toString());
        } catch (IOException | UnsupportedOperationException gone) {
            return Optional.empty();
        }
    }

    private static Path realOrNull(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return null;
        }
    }
}
