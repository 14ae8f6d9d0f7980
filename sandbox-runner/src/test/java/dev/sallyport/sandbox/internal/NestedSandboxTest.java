package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process sandbox inside another sandbox that already holds a seccomp notification listener ({@link OtherSandbox}
 * stands in for it, with the project's own {@link Seccomp}): the kernel refuses the connect supervisor's listener
 * ({@code EBUSY}). Without {@code requireLandlock} the run goes on without the supervisor and says so in one line;
 * with it, the run fails in one line saying what it means and what to do. Real JVMs, real bwrap.
 */
@Timeout(180)
class NestedSandboxTest {
    private static final String HELD = "seccomp(SET_MODE_FILTER, NEW_LISTENER): 16 (EBUSY): another sandbox around"
            + " this one already holds a seccomp notification listener";
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path tmp;
    private Path ca;
    /** Stands in for the proxy: nothing inside connects to it. */
    private ServerSocket proxy;

    @BeforeEach
    void supervisedHere() throws Exception {
        Prerequisites.require("seccomp user notifications, pidfd_getfd", HostLink.canSupervise(),
                "Linux 5.6+ with unix_diag: the connect supervisor whose listener is refused");
        Assumptions.assumeTrue(Landlock.forCurrentArch().abi() < Inside.UNIX_SOCKET_ABI,
                "Landlock ABI 9+ guards unix sockets itself: no supervisor, no listener to refuse");
        Files.createDirectories(tmp.resolve("ws"));
        Files.createDirectories(tmp.resolve("home"));
        ca = TestPki.create().rootPem(tmp);
        proxy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void closeProxy() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
    }

    @Test
    void withoutRequireLandlockTheRunGoesOnWithoutTheSupervisorAndSaysSoOnce() throws Exception {
        ExternalProcess.Result alone = ExternalProcess.run(TIMEOUT, runSandbox(false), null);
        assertThat(alone.exit()).as(alone.stderr()).isZero();
        assertThat(alone.stderr()).as("outside any other sandbox").doesNotContain("EBUSY");

        ExternalProcess.Result nested = ExternalProcess.run(TIMEOUT, inOtherSandbox(runSandbox(false)), null);
        assertThat(nested.exit()).as(nested.stderr()).isZero();
        assertThat(nested.stdout()).isEqualTo("inside\n");
        assertThat(nested.stderr()).containsOnlyOnce("sallyport sandbox: warning: " + HELD)
                .contains("running without it: a host service's unix socket that appears in the workspace or a"
                        + " grant during the run can be connected to");
    }

    @Test
    void withRequireLandlockTheNestedRunFailsInOneLineSayingWhatToDo() throws Exception {
        Assumptions.assumeTrue(Landlock.forCurrentArch().abi() >= 4,
                "below Landlock ABI 4 --require-landlock fails before the seccomp step");
        ExternalProcess.Result nested = ExternalProcess.run(TIMEOUT, inOtherSandbox(runSandbox(true)), null);
        assertThat(nested.exit()).as(nested.stderr()).isEqualTo(Inside.SETUP_FAILED);
        assertThat(nested.stdout()).as("the command never ran").isEmpty();
        assertThat(nested.stderr()).contains("sallyport sandbox: " + HELD)
                .contains("(expected: a run outside the other sandbox, a kernel with Landlock ABI >= 9, or no"
                        + " --require-landlock, which runs without that guard)")
                .doesNotContain("warning: " + HELD);
    }

    private List<String> runSandbox(boolean requireLandlock) {
        List<String> command = new ArrayList<>(java());
        command.addAll(List.of(RunSandbox.class.getName(), tmp.resolve("ws").toString(), tmp.resolve("home").toString(),
                ca.toString(), Integer.toString(proxy.getLocalPort()), Boolean.toString(requireLandlock),
                "/bin/sh", "-c", "echo inside"));
        return command;
    }

    private List<String> inOtherSandbox(List<String> command) {
        List<String> outer = new ArrayList<>(java());
        outer.add(OtherSandbox.class.getName());
        outer.addAll(command);
        return outer;
    }

    private static List<String> java() {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"));
    }
}
