package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.upstream.NpmRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * npm inside {@code sallyport run} against a registry on {@code npm.example.test}, named by the project's own
 * {@code .npmrc}: {@code npm install} resolves a plain and a scoped package (npm asks for
 * {@code /@sallyport-test%2fshout}, which the registry's rule allows with {@code allow_encoded_slash}, as a user's
 * npm rule would) and writes {@code package-lock.json}; then, in a second run whose home (and so npm's cache)
 * starts empty, {@code npm ci} installs from that lock file, downloading the tarballs again. Node then loads both
 * packages. See {@link ToolRun} for how the runs are set up.
 */
class RunToolsNpmTest {
    private static final String HOST = "npm.example.test";
    private static final String PLAIN_TARBALL = "/tiny-greeting/-/tiny-greeting-1.0.0.tgz";
    private static final String SCOPED_TARBALL = "/@sallyport-test/shout/-/shout-2.1.0.tgz";
    private static final String USE_BOTH = "node -e 'console.log(require(\"tiny-greeting\")() + \" \""
            + " + require(\"@sallyport-test/shout\")(\"ok\"))' > out.txt";

    @TempDir
    Path dir;

    @Test
    void npmInstallThenNpmCiResolveAPlainAndAScopedPackage() throws IOException {
        try (ToolRun tools = new ToolRun(dir)) {
            TestPki.Issued certificate = tools.certificate(HOST);
            try (NpmRegistry registry = NpmRegistry.start(certificate.key(), certificate.chain(), HOST)) {
                registry.publish("tiny-greeting", "1.0.0", Map.of("index.js",
                                "module.exports = () => 'hello from tiny-greeting';\n"))
                        .publish("@sallyport-test/shout", "2.1.0", Map.of("index.js",
                                "module.exports = s => s.toUpperCase() + '!';\n"));
                tools.upstream(HOST, registry.port(), "allow_encoded_slash: true");
                installThenCi(tools, registry);
            }
        }
    }

    private static void installThenCi(ToolRun tools, NpmRegistry registry) throws IOException {
        Path project = tools.workspace();
        Files.writeString(project.resolve("package.json"), """
                {"name": "app", "version": "1.0.0", "private": true,
                 "dependencies": {"tiny-greeting": "^1.0.0", "@sallyport-test/shout": "^2.1.0"}}
                """);
        Files.writeString(project.resolve(".npmrc"), "registry=" + registry.url() + "\n");

        ExternalProcess.Result install = tools.run("", Map.of(), "npm install && " + USE_BOTH);
        assertThat(install.exit()).as(install.stderr()).isZero();
        assertThat(project.resolve("out.txt")).content().isEqualTo("hello from tiny-greeting OK!\n");
        assertThat(targets(registry.received())).contains("/tiny-greeting", "/@sallyport-test%2fshout",
                PLAIN_TARBALL, SCOPED_TARBALL);
        assertThat(project.resolve("package-lock.json")).content().contains(tools.origin(HOST) + SCOPED_TARBALL);

        delete(project.resolve("node_modules"));
        Files.delete(project.resolve("out.txt"));
        int before = registry.received().size();
        ExternalProcess.Result ci = tools.run("", Map.of(), "npm ci && " + USE_BOTH);
        assertThat(ci.exit()).as(ci.stderr()).isZero();
        assertThat(project.resolve("out.txt")).content().isEqualTo("hello from tiny-greeting OK!\n");
        List<String> received = registry.received();
        assertThat(targets(received.subList(before, received.size()))).as("what npm ci downloaded")
                .contains(PLAIN_TARBALL, SCOPED_TARBALL);
    }

    /** The request targets of request lines ({@code GET /x HTTP/1.1}). */
    private static List<String> targets(List<String> requestLines) {
        return requestLines.stream().map(line -> line.split(" ")[1]).toList();
    }

    private static void delete(Path tree) throws IOException {
        try (Stream<Path> paths = Files.walk(tree)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
