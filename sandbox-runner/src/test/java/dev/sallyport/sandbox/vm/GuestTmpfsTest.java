package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.net.CommandResult;
import dev.sallyport.sandbox.net.Executables;
import dev.sallyport.sandbox.net.HostCommand;
import dev.sallyport.sandbox.net.HostShell;
import dev.sallyport.testing.Prerequisites;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guest's {@code /tmp}: the options nerdctl ends up with for our {@code --tmpfs}, then a real tmpfs mounted
 * with exactly those options, in which a program must run.
 *
 * <p>nerdctl cannot run here, so {@link #nerdctlMerge} models what it does with a {@code --tmpfs} value (read from
 * nerdctl's {@code mountutil.ProcessFlagTmpfs} and moby's {@code MergeTmpfsOptions}: {@code noexec,nosuid,nodev} go
 * first, then the value's options; of each flag pair and each {@code key=} the last one wins, in the order of those
 * last ones), and is checked against nerdctl's own test cases.
 */
class GuestTmpfsTest {

    static final HostShell SHELL = new HostShell(Duration.ofSeconds(20));

    /** Flag words and the kernel flag they set or clear (pairs share a key); the subset tmpfs options use. */
    static final Map<String, String> FLAGS = Map.ofEntries(Map.entry("rw", "ro"), Map.entry("ro", "ro"),
            Map.entry("exec", "noexec"), Map.entry("noexec", "noexec"), Map.entry("suid", "nosuid"),
            Map.entry("nosuid", "nosuid"), Map.entry("dev", "nodev"), Map.entry("nodev", "nodev"),
            Map.entry("atime", "noatime"), Map.entry("noatime", "noatime"));

    static List<String> nerdctlMerge(String tmpfsFlag) {
        int colon = tmpfsFlag.indexOf(':');
        List<String> raw = new ArrayList<>(List.of("noexec", "nosuid", "nodev"));
        if (colon < 0) {
            return raw;
        }
        raw.addAll(List.of(tmpfsFlag.substring(colon + 1).split(",")));
        List<String> merged = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String option : raw.reversed()) {
            String key = FLAGS.containsKey(option) ? FLAGS.get(option) : option.substring(0, option.indexOf('=') + 1);
            if (seen.add(key)) {
                merged.add(0, option);
            }
        }
        return merged;
    }

    @Test
    void theModelAgreesWithNerdctlsOwnTestCases() {
        assertThat(nerdctlMerge("/tmp")).containsExactly("noexec", "nosuid", "nodev");
        assertThat(nerdctlMerge("/tmp:size=64m,exec")).containsExactly("nosuid", "nodev", "size=64m", "exec");
    }

    @Test
    void theGuestTmpIsExecutableAndSized() {
        assertThat(nerdctlMerge(NerdctlCommand.tmpfs(ResourceLimits.DEFAULTS)))
                .containsExactly("rw", "exec", "nosuid", "nodev", "size=1g", "mode=1777");
    }

    @Test
    void aProgramRunsFromATmpfsMountedWithThoseOptionsAndNotFromNerdctlsDefault(@TempDir Path mountPoint)
            throws Exception {
        Prerequisites.requireRoot("mounting a tmpfs in a new mount namespace");
        Prerequisites.require("unshare", Executables.find("unshare").isPresent(), "util-linux");

        CommandResult ours = runFrom(mountPoint, String.join(",", nerdctlMerge(NerdctlCommand.tmpfs(
                ResourceLimits.DEFAULTS))));
        CommandResult nerdctlDefault = runFrom(mountPoint, String.join(",", nerdctlMerge("/tmp")));

        assertThat(ours.exit()).as(ours.stderr()).isZero();
        assertThat(ours.stdout()).contains("ran from tmpfs").contains("size=1048576k").doesNotContain("noexec");
        assertThat(nerdctlDefault.exit()).as("a plain --tmpfs /tmp is noexec").isEqualTo(126);
    }

    /** Mounts a tmpfs with {@code options} in a private mount namespace, copies a script there and runs it. */
    private static CommandResult runFrom(Path mountPoint, String options) throws Exception {
        String script = "set -e; mount -t tmpfs -o " + options + " tmpfs " + mountPoint + "; "
                + "grep ' " + mountPoint + " ' /proc/self/mounts; "
                + "printf '#!/bin/sh\\necho ran from tmpfs\\n' > " + mountPoint + "/tool; chmod +x " + mountPoint
                + "/tool; " + mountPoint + "/tool";
        return SHELL.capture(HostCommand.tolerant("unshare", "-m", "--propagation", "private", "sh", "-c", script));
    }
}
