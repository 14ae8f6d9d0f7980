package dev.sallyport.sandbox.doctor;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.CommandRunner;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
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
    private static final String CONTAINERD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private final CommandRunner runner;
    private final Path root;

    /** @param root the file system root to inspect ({@code /}); tests may point it elsewhere */
    public Doctor(CommandRunner runner, Path root) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.root = Objects.requireNonNull(root, "root");
    }

    /** The doctor for this host. */
    public static Doctor forHost() {
        return new Doctor(new HostShell(Duration.ofSeconds(20)), Path.of("/"));
    }

    /** Runs every check. */
    public List<Check> run() {
        List<Check> checks = new ArrayList<>();
        checks.add(versionCheck("containerd", "containerd", "install containerd (Debian: apt-get install containerd) "
                + "and start it (systemctl enable --now containerd)"));
        checks.add(versionCheck("nerdctl", "nerdctl", "install nerdctl (the 'full' release bundle includes the CNI "
                + "plugins) into /usr/local/bin; it is not packaged by Debian 12"));
        checks.add(kataShim());
        checks.add(kvm());
        checks.add(vhostVsock());
        checks.add(versionCheck("nftables", "nft", "apt-get install nftables"));
        checks.add(nftList());
        checks.add(cniPlugins());
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

    private Check versionCheck(String name, String program, String fix) {
        Optional<Path> found = Executables.find(program);
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
        Optional<Path> nft = Executables.find("nft");
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

    private Check cniPlugins() {
        String name = "CNI plugins";
        for (String dir : List.of("opt/cni/bin", "usr/lib/cni", "usr/libexec/cni")) {
            Path bridge = root.resolve(dir).resolve("bridge");
            if (Files.isExecutable(bridge)) {
                boolean firewall = Files.isExecutable(root.resolve(dir).resolve("firewall"));
                String detail = "/" + dir + " (bridge" + (firewall ? ", firewall" : "") + ")";
                if (!dir.equals("opt/cni/bin")) {
                    return Check.warn(name, "found in " + detail + ", but nerdctl looks in /opt/cni/bin",
                            "set CNI_PATH=/" + dir + " for nerdctl, or link the plugins into /opt/cni/bin");
                }
                return Check.ok(name, detail);
            }
        }
        return Check.fail(name, "no bridge plugin in /opt/cni/bin, /usr/lib/cni or /usr/libexec/cni",
                "apt-get install containernetworking-plugins, or use nerdctl's 'full' bundle");
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
