package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.Prerequisites;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The binding itself, in this JVM: a confined platform thread, the process it starts, and the rest of the JVM
 * that must stay unconfined (the sandbox relies on all three).
 */
@Timeout(60)
class LandlockTest {
    @TempDir
    Path tmp;

    @Test
    void aConfinedThreadAndItsChildrenCannotWriteOutsideTheirRulesWhileOtherThreadsCan() throws Exception {
        Landlock landlock = Landlock.forCurrentArch();
        Prerequisites.require("Landlock", landlock.abi() >= 1, "a kernel with Landlock enabled");
        Path allowed = Files.createDirectories(tmp.resolve("allowed"));
        Path denied = Files.createDirectories(tmp.resolve("denied"));
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread confined = Thread.ofPlatform().start(() -> {
            try {
                Landlock.Outcome outcome = landlock.restrictCurrentThread(List.of(
                        new Landlock.PathRule(Path.of("/"), Landlock.READ),
                        new Landlock.PathRule(Path.of("/dev"), Landlock.DEVICES),
                        new Landlock.PathRule(allowed, Landlock.READ_WRITE)), 0);
                String self = tryWrite(denied.resolve("thread.txt"));
                Files.writeString(allowed.resolve("thread.txt"), "ok");
                Process child = new ProcessBuilder("/bin/sh", "-c", "echo x > '" + denied + "/child.txt'; echo d=$?;"
                        + " echo x > '" + allowed + "/child.txt'; echo a=$?").redirectErrorStream(true).start();
                String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                child.waitFor(30, TimeUnit.SECONDS);
                result.complete("abi=" + outcome.abi() + " thread=" + self + " " + out.replace('\n', ' '));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        String r = result.get(60, TimeUnit.SECONDS);
        confined.join();
        assertThat(r).contains("thread=denied", "d=2", "a=0");
        assertThat(denied.resolve("thread.txt")).doesNotExist();
        assertThat(denied.resolve("child.txt")).doesNotExist();
        assertThat(allowed.resolve("child.txt")).exists();
        // This (test) thread was never confined.
        Files.writeString(denied.resolve("main.txt"), "ok");
        assertThat(denied.resolve("main.txt")).hasContent("ok");
    }

    @Test
    @SuppressWarnings("ErroneousBitwiseExpression")   // the last check is meant to be 0: no grant holds RESOLVE_UNIX
    void masksRightsToTheAbi() {
        assertThat(Landlock.fsMask(1) & Landlock.REFER).isZero();
        assertThat(Landlock.fsMask(2) & Landlock.REFER).isNotZero();
        assertThat(Landlock.fsMask(2) & Landlock.TRUNCATE).isZero();
        assertThat(Landlock.fsMask(3) & Landlock.TRUNCATE).isNotZero();
        assertThat(Landlock.fsMask(4) & Landlock.IOCTL_DEV).isZero();
        assertThat(Landlock.fsMask(5) & Landlock.IOCTL_DEV).isNotZero();
        assertThat(Landlock.fsMask(8) & Landlock.RESOLVE_UNIX).isZero();
        assertThat(Landlock.fsMask(9) & Landlock.RESOLVE_UNIX).as("handled from ABI 9").isNotZero();
        assertThat((Landlock.READ_WRITE | Landlock.DEVICES) & Landlock.RESOLVE_UNIX).as("granted nowhere").isZero();
    }

    private static String tryWrite(Path p) {
        try {
            Files.writeString(p, "x");
            return "written";
        } catch (java.io.IOException e) {
            return "denied";
        }
    }
}
