package dev.sallyport.sandbox.vm;

import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.testing.Prerequisites;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * The test stand-in for nerdctl ({@code fake-nerdctl.sh}): its "containers" are network namespaces attached to the
 * sandbox bridge by CNI's own plugins, chained from the conflist nerdctl would write. Root only.
 */
public final class StandInNerdctl {

    static final List<String> PLUGINS = List.of("bridge", "host-local", "firewall", "tuning");

    private StandInNerdctl() {
    }

    /**
     * Checks what the stand-in needs (root, the tools, CNI's plugins; a failure under CI=true, else a skip) and writes
     * it to {@code dir/nerdctl}, its state (calls.log, conflists, containers) under {@code dir/state}.
     */
    public static Path write(Path dir) throws Exception {
        Prerequisites.requireRoot("bridges, namespaces, nftables; CI runs as root");
        for (String tool : List.of("ip", "nft", "bash", "sha256sum", "sysctl", "python3", "iptables", "ip6tables")) {
            Prerequisites.require(tool, Executables.find(tool).isPresent(), "scripts/install-deps.sh installs it");
        }
        Path cni = List.of(Path.of("/usr/lib/cni"), Path.of("/opt/cni/bin")).stream()
                .filter(d -> PLUGINS.stream().allMatch(p -> Files.isExecutable(d.resolve(p)))).findFirst().orElse(null);
        Prerequisites.require("CNI plugins " + PLUGINS, cni != null, "apt-get install containernetworking-plugins");
        Path state = Files.createDirectories(dir.resolve("state"));
        String script;
        try (InputStream in = StandInNerdctl.class.getResourceAsStream("fake-nerdctl.sh")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("@STATE@", state.toString())
                    .replace("@CNI@", cni.toString());
        }
        Path nerdctl = dir.resolve("nerdctl");
        Files.writeString(nerdctl, script);
        Files.setPosixFilePermissions(nerdctl, PosixFilePermissions.fromString("rwx------"));
        return nerdctl;
    }
}
