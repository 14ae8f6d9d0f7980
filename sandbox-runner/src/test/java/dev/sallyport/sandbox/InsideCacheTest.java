package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.internal.Inside;
import dev.sallyport.sandbox.internal.InsideTraining;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox's setup JVM from a small jar of its own with the ahead-of-time cache {@link InsideTraining} makes
 * (what {@code bin/sallyport} gives it), and with a cache it cannot use, which must only cost time.
 */
@Timeout(300)
class InsideCacheTest {
    @TempDir
    Path tmp;

    @Test
    void aSandboxStartsFromTheTrainedCacheAndAlsoFromOneTheJvmCannotUse() throws Exception {
        Path jar = insideJar(Files.createDirectories(tmp.resolve("jars")).resolve("inside.jar"));
        Path cache = tmp.resolve("jars/inside.aot");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Exec training = exec(List.of(java, "-cp", jar.toString(), InsideTraining.class.getName(), cache.toString()));
        assertThat(training.status()).as(training.output()).isZero();
        assertThat(cache).isRegularFile();
        List<String> strict = new ArrayList<>(List.of(java));
        strict.addAll(Inside.JVM_OPTIONS);
        strict.addAll(List.of("-XX:AOTMode=on", "-XX:AOTCache=" + cache, "-cp", jar.toString(), "-version"));
        Exec usable = exec(strict);
        assertThat(usable.status()).as("a JVM with the setup's options that must use the cache: " + usable.output())
                .isZero();

        Fixture f = new Fixture(tmp.resolve("world"));
        System.setProperty(ProcessSandbox.INSIDE_JAR_PROPERTY, jar.toString());
        try {
            assertThat(ProcessSandbox.classes()).isEqualTo(jar);
            Fixture.Run trained = f.run("echo started");
            assertThat(trained.exit()).as(trained.err()).isZero();
            assertThat(trained.out()).isEqualTo("started\n");

            byte[] garbage = new byte[64 << 10];
            new Random(17).nextBytes(garbage);
            Files.write(cache, garbage);
            Files.setLastModifiedTime(cache, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() + 1000));
            Fixture.Run unusable = f.run("echo started");
            assertThat(unusable.exit()).as(unusable.err()).isZero();
            assertThat(unusable.out()).as("the command's output holds no word from the JVM").isEqualTo("started\n");
            assertThat(unusable.err()).doesNotContainIgnoringCase("aot").doesNotContainIgnoringCase("cds")
                    .doesNotContainIgnoringCase("warning");
        } finally {
            System.clearProperty(ProcessSandbox.INSIDE_JAR_PROPERTY);
            f.close();
        }
    }

    /** The jar bin/sallyport's build makes: this module's internal package only. */
    private static Path insideJar(Path jar) throws IOException {
        Path classes = ProcessSandbox.classes();
        Path pkg = classes.resolve(Inside.class.getPackageName().replace('.', '/'));
        try (OutputStream file = Files.newOutputStream(jar); ZipOutputStream zip = new ZipOutputStream(file);
             Stream<Path> entries = Files.list(pkg)) {
            for (Path c : entries.sorted().toList()) {
                zip.putNextEntry(new ZipEntry(classes.relativize(c).toString()));
                Files.copy(c, zip);
                zip.closeEntry();
            }
        }
        return jar;
    }

    private record Exec(int status, String output) {}

    private static Exec exec(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(240, TimeUnit.SECONDS)).as("finished: " + command).isTrue();
        return new Exec(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
