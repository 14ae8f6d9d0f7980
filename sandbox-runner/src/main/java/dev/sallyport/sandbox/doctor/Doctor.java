package dev.sallyport.sandbox.doctor;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.sandbox.vm.VmSandbox;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code sallyport doctor}: one line per requirement, with the fix when it is missing. Exit status 0 when nothing
 * failed, 1 otherwise (warnings do not fail).
 */
public final class Doctor {

    private static final Pattern VERSION = Pattern.compile("v?([0-9]+\\.[0-9]+(\\.[0-9]+)?[0-9A-Za-z.~+-]*)");
    private static final List<String> KATA_DIRS = List.of("/opt/kata/runtime-rs/bin", "/opt/kata/bin");
    /** nerdctl's CNI folders, in the order it tries them (rootful; {@code pkg/defaults} of nerdctl 2.x). */
    static final List<String> CNI_FOLDERS = List.of("/opt/cni/bin", "/usr/local/libexec/cni", "/usr/local/lib/cni",
            "/home/linuxbrew/.linuxbrew/opt/cni-plugins/bin", "/usr/libexec/cni", "/usr/lib/cni");
    /** What nerdctl's bridge conflists run: bridge, host-local IPAM, firewall, tuning; portmap without --internal. */
    static final List<String> CNI_PLUGINS = List.of("bridge", "host-local", "firewall", "tuning", "portmap");
    private static final int PROXY_PORT = VmSandbox.PROXY_PORT;
    private static final String CONTAINERD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /** The oldest nerdctl with {@code network create --internal} (2.1.4): older ones fail every run. */
    static final Version NERDCTL_MINIMUM = new Version(2, 1, 4);
    /** The oldest containerd nerdctl 2.x is tested against (its CI runs 1.7 and 2.x). */
    static final Version CONTAINERD_TESTED = new Version(1, 7, 0);

    private final CommandRunner runner;
    private final Path root;
    private final Programs programs;
    private final String cniPathOverride;

    /** @param root the file system root to inspect ({@code /}); tests may point it elsewhere */
    public Doctor(CommandRunner runner, Path root) {
        this(runner, root, Executables::find, System.getenv("CNI_PATH"));
    }

    /**
     * @param programs        where programs are looked up (the PATH on a host; a folder of stand-ins in tests)
     * @param cniPathOverride nerdctl's {@code CNI_PATH} when set, else {@code null}
     */
    Doctor(CommandRunner runner, Path root, Programs programs, /* @Nullable */ String cniPathOverride) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.root = Objects.requireNonNull(root, "root");
        this.programs = Objects.requireNonNull(programs, "programs");
        this.cniPathOverride = cniPathOverride == null || cniPathOverride.isBlank() ? null : cniPathOverride;
    }

    /** Finds a program by name. */
    @FunctionalInterface
    interface Programs {
        Optional<Path> find(String name);
    }

    /** The doctor for this host. */
    public static Doctor forHost() {
        return new Doctor(new HostShell(Duration.ofSeconds(20)), Path.of("/"));
    }

    /** Runs every check. */
    public List<Check> run() {
        List<Check> checks = new ArrayList<>();
        checks.add(containerd());
        checks.add(nerdctl());
        checks.add(kataShim());
        checks.add(kvm());
        checks.add(vhostVsock());
        checks.add(versionCheck("nftables", "nft", "apt-get install nftables"));
        checks.add(nftList());
        checks.add(cniPlugins());
        checks.add(hostInputFirewall());
        checks.add(versionCheck("bubblewrap", "bwrap", "apt-get install bubblewrap"));
        checks.add(landlock());
        return checks;
    }

    /** Prints every check and returns the exit status (0: nothing failed, 1: something failed). */
    public int print(PrintStream out) {
        boolean failed = false;
        for (Check check : run()) {
            out.println(check.line());
            failed |= check.status() == Check.Status.FAIL;
        }
        return failed ? 1 : 0;
    }

    private Check nerdctl() {
        String fix = "install nerdctl >= " + NERDCTL_MINIMUM + " (the release binary, or the 'full' bundle with "
                + "containerd and the CNI plugins) into /usr/local/bin; Debian 12 does not package it";
        Check found = versionCheck("nerdctl", "nerdctl", fix);
        return found.status() != Check.Status.OK ? found : Version.parse(found.detail())
                .filter(v -> v.atLeast(NERDCTL_MINIMUM)).map(v -> found)
                .orElse(Check.fail("nerdctl", found.detail() + " is not " + NERDCTL_MINIMUM
                        + " or later ('network create --internal' is missing: every run would fail)", fix));
    }

    private Check containerd() {
        String fix = "use containerd >= " + CONTAINERD_TESTED + " (nerdctl's 'full' bundle ships a tested one; "
                + "Debian 12's package is 1.6)";
        Check found = versionCheck("containerd", "containerd", "install containerd >= " + CONTAINERD_TESTED
                + " (nerdctl's 'full' bundle, or your distribution's package where it is new enough) and start it "
                + "(systemctl enable --now containerd)");
        return found.status() != Check.Status.OK ? found : Version.parse(found.detail())
                .filter(v -> v.atLeast(CONTAINERD_TESTED)).map(v -> found)
                .orElse(Check.warn("containerd", found.detail() + " is older than " + CONTAINERD_TESTED
                        + ", which nerdctl 2.x is no longer tested against", fix));
    }

    private Check versionCheck(String name, String program, String fix) {
        Optional<Path> found = programs.find(program);
        if (found.isEmpty()) {
            return Check.fail(name, program + " not found on PATH", fix);
        }
        try {
            CommandResult result = runner.capture(HostCommand.tolerant(found.get().toString(), "--version"));
            if (result.exit() != 0) {
                return Check.fail(name, program + " --version exited " + result.exit() + ": "
                        + result.firstErrorLine(), fix);
            }
            return Check.ok(name, version(result.stdout() + result.stderr()));
        } catch (IOException e) {
            return Check.fail(name, e.getMessage(), fix);
        }
    }

    /** The first version-looking token of a {@code --version} output, e.g. {@code 1.0.6}. */
    static String version(String output) {
        for (String token : output.strip().split("\\s+")) {
            Matcher matcher = VERSION.matcher(token);
            if (matcher.matches()) {
                return matcher.group(1);
            }
        }
        return output.strip().lines().findFirst().orElse("(no version)");
    }

    private Check kataShim() {
        String name = "kata shim (io.containerd.kata.v2)";
        String containerdPath = containerdPath();
        Optional<Path> shim = Optional.empty();
        for (String dir : containerdPath.split(":")) {
            Path candidate = root.resolve(dir.replaceFirst("^/", "")).resolve("containerd-shim-kata-v2");
            if (!dir.isEmpty() && Files.isExecutable(candidate)) {
                shim = Optional.of(candidate);
                break;
            }
        }
        if (shim.isEmpty()) {
            for (String dir : KATA_DIRS) {
                Path installed = root.resolve(dir.substring(1)).resolve("containerd-shim-kata-v2");
                if (Files.isExecutable(installed)) {
                    return Check.fail(name, "installed at " + installed + " but not on containerd's PATH",
                            "ln -s " + installed + " /usr/local/bin/containerd-shim-kata-v2");
                }
            }
            return Check.fail(name, "containerd-shim-kata-v2 not found on containerd's PATH (" + containerdPath + ")",
                    "install Kata Containers (release tarball into /opt/kata) and link "
                            + "/opt/kata/bin/containerd-shim-kata-v2 into /usr/local/bin");
        }
        Path resolved = shim.get();
        try {
            resolved = shim.get().toRealPath();
        } catch (IOException e) {
            // keep the unresolved path
        }
        String flavour = resolved.toString().contains("runtime-rs") ? "runtime-rs (Rust; the Kata 4 default)"
                : "Go runtime (Kata 3 default; deprecated in Kata 4)";
        return Check.ok(name, shim.get() + " -> " + resolved + ", " + flavour);
    }

    /** containerd's own PATH when it runs (read from /proc), else the PATH a systemd service gets. */
    private String containerdPath() {
        Path proc = root.resolve("proc");
        try (var entries = Files.list(proc)) {
            for (Path entry : entries.filter(p -> p.getFileName().toString().matches("[0-9]+")).toList()) {
                try {
                    if (!Files.readString(entry.resolve("comm")).strip().equals("containerd")) {
                        continue;
                    }
                    for (String variable : new String(Files.readAllBytes(entry.resolve("environ")), StandardCharsets.UTF_8).split("\0")) {
                        if (variable.startsWith("PATH=")) {
                            return variable.substring(5);
                        }
                    }
                    return CONTAINERD_DEFAULT_PATH;
                } catch (IOException raced) {
                    // the process ended while we looked
                }
            }
        } catch (IOException e) {
            return CONTAINERD_DEFAULT_PATH;
        }
        return CONTAINERD_DEFAULT_PATH;
    }

    private Check kvm() {
        Path kvm = root.resolve("dev/kvm");
        String fix = "enable hardware virtualization (VT-x/AMD-V) in the firmware, or nested virtualization on a "
                + "cloud VM; then modprobe kvm_intel (or kvm_amd)";
        if (!Files.exists(kvm)) {
            return Check.fail("/dev/kvm", "not present", fix);
        }
        if (!Files.isReadable(kvm) || !Files.isWritable(kvm)) {
            return Check.fail("/dev/kvm", "present but not readable and writable by this user",
                    "run as root, or add the user to group kvm");
        }
        return Check.ok("/dev/kvm", "read-write");
    }

    private Check vhostVsock() {
        Path device = root.resolve("dev/vhost-vsock");
        boolean module = Files.isDirectory(root.resolve("sys/module/vhost_vsock"));
        if (Files.exists(device)) {
            return Check.ok("vhost-vsock", "/dev/vhost-vsock" + (module ? " (module vhost_vsock loaded)" : ""));
        }
        return Check.fail("vhost-vsock", "/dev/vhost-vsock not present" + (module ? " (module loaded)" : ", module "
                + "vhost_vsock not loaded"), "modprobe vhost_vsock (Kata's agent talks to the guest over vsock)");
    }

    private Check nftList() {
        Optional<Path> nft = programs.find("nft");
        if (nft.isEmpty()) {
            return Check.fail("nftables ruleset", "nft not found", "apt-get install nftables");
        }
        try {
            CommandResult result = runner.capture(HostCommand.tolerant(nft.get().toString(), "list", "tables"));
            if (result.exit() != 0) {
                return Check.fail("nftables ruleset", "cannot list tables: " + result.firstErrorLine(),
                        "run as root (the VM backend needs CAP_NET_ADMIN for its bridge and table)");
            }
            long tables = result.stdout().lines().filter(l -> l.startsWith("table ")).count();
            return Check.ok("nftables ruleset", "listable (" + tables + " tables)");
        } catch (IOException e) {
            return Check.fail("nftables ruleset", e.getMessage(), "run as root");
        }
    }

    /**
     * The CNI plugins, where nerdctl will look for them: {@code CNI_PATH} when set, else the first of its folders
     * that exists (an incomplete {@code /opt/cni/bin} wins over a complete {@code /usr/lib/cni}). Every plugin of the
     * conflist {@code network create --internal} writes must be there, and the firewall plugin needs iptables and
     * ip6tables.
     */
    private Check cniPlugins() {
        String name = "CNI plugins";
        Optional<String> folder = cniPathOverride != null ? Optional.of(cniPathOverride)
                : CNI_FOLDERS.stream().filter(dir -> Files.exists(root.resolve(dir.substring(1)))).findFirst();
        if (folder.isEmpty()) {
            return Check.fail(name, "none of nerdctl's CNI folders exists (" + String.join(", ", CNI_FOLDERS) + ")",
                    "apt-get install containernetworking-plugins, or unpack nerdctl's 'full' bundle");
        }
        Path dir = root.resolve(folder.get().substring(1));
        String source = cniPathOverride != null ? " (CNI_PATH)" : " (the first of nerdctl's CNI folders that exists)";
        List<String> missing = CNI_PLUGINS.stream().filter(plugin -> !Files.isExecutable(dir.resolve(plugin))).toList();
        if (!missing.isEmpty()) {
            String complete = CNI_FOLDERS.stream().filter(other -> CNI_PLUGINS.stream()
                    .allMatch(plugin -> Files.isExecutable(root.resolve(other.substring(1)).resolve(plugin))))
                    .findFirst().map(other -> "; " + other + " has them all: set CNI_PATH=" + other + " for nerdctl "
                            + "or link them into " + folder.get()).orElse("");
            return Check.fail(name, folder.get() + source + " lacks " + String.join(", ", missing),
                    "install them there (containernetworking-plugins, or nerdctl's 'full' bundle)" + complete);
        }
        List<String> tools = List.of("iptables", "ip6tables").stream().filter(tool -> programs.find(tool).isEmpty())
                .toList();
        if (!tools.isEmpty()) {
            return Check.fail(name, "the firewall plugin runs " + String.join(" and ", tools)
                    + ", not found on PATH", "apt-get install iptables");
        }
        return Check.ok(name, folder.get() + source + ": " + String.join(", ", CNI_PLUGINS) + "; iptables, ip6tables");
    }

    /**
     * Another table's input chain with {@code policy drop} (ufw, firewalld, a hand-written nftables.conf) sees the
     * sandbox's connections to the proxy after our table accepted them, and drops them: an accept is final only
     * within its own chain.
     */
    private Check hostInputFirewall() {
        String name = "host input firewall";
        Optional<Path> nft = programs.find("nft");
        if (nft.isEmpty()) {
            return Check.warn(name, "nft not found, cannot tell", "apt-get install nftables");
        }
        try {
            CommandResult result = runner.capture(HostCommand.tolerant(nft.get().toString(), "list", "chains"));
            if (result.exit() != 0) {
                return Check.warn(name, "cannot list chains: " + result.firstErrorLine(), "run as root");
            }
            List<String> dropping = InputPolicies.dropping(result.stdout());
            if (dropping.isEmpty()) {
                return Check.ok(name, "no input chain drops by default");
            }
            return Check.warn(name, String.join(", ", dropping) + " drops by default: it will also drop the "
                    + "sandboxes' connections to the proxy (TCP port " + PROXY_PORT + " on their bridges)",
                    "accept TCP to port " + PROXY_PORT + " arriving on interfaces named br-* in that chain (nft: "
                            + "iifname \"br-*\" tcp dport " + PROXY_PORT + " accept; ufw: add '-A ufw-before-input -i br-+ "
                            + "-p tcp --dport " + PROXY_PORT + " -j ACCEPT' to /etc/ufw/before.rules)");
        } catch (IOException e) {
            return Check.warn(name, e.getMessage(), "run as root");
        }
    }

    private Check landlock() {
        Landlock.Probe probe = Landlock.probe();
        if (probe.abi().isPresent()) {
            return Check.ok("Landlock", "ABI " + probe.abi().getAsInt());
        }
        return Check.fail("Landlock", probe.reason(), "a kernel >= 5.13 with CONFIG_SECURITY_LANDLOCK=y and "
                + "'landlock' in the lsm= boot parameter (only the process backend uses it)");
    }
}
