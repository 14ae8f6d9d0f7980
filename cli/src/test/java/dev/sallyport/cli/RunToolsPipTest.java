package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.tools.HttpsSite;
import dev.sallyport.testing.tools.PythonIndex;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * pip inside {@code sallyport run}: the distribution's {@code python3} makes a virtual environment in the
 * project folder, and its pip installs a wheel from a package index on {@code pypi.example.test} named on pip's
 * own command line ({@code --index-url}); pip finds the proxy and the trust bundle in what the sandbox sets. See
 * {@link ToolRun} for how the run is set up.
 */
class RunToolsPipTest {
    private static final String HOST = "pypi.example.test";

    @TempDir
    Path dir;

    @Test
    void pipInstallsAWheelIntoAVirtualEnvironment() throws IOException {
        try (ToolRun tools = new ToolRun(dir)) {
            HttpsSite site = tools.site(HOST);
            site.route("/", new PythonIndex().addWheel("tinypkg", "1.0", Map.of("tinypkg/__init__.py",
                    "def greet():\n    return 'hello from tinypkg'\n")));
            ExternalProcess.Result run = tools.run("", Map.of(), String.join(" && ",
                    "python3 -m venv .venv",
                    ".venv/bin/pip install -q --index-url " + tools.origin(HOST) + "/simple/ tinypkg",
                    ".venv/bin/python -c 'import tinypkg; print(tinypkg.greet())' > out.txt"));

            assertThat(run.exit()).as(run.stderr()).isZero();
            assertThat(tools.workspace().resolve("out.txt")).content().isEqualTo("hello from tinypkg\n");
            assertThat(site.requests()).extracting(HttpsSite.Request::target)
                    .contains("/simple/tinypkg/", "/files/tinypkg-1.0-py3-none-any.whl");
            assertThat(tools.audit()).contains("\"host\":\"" + HOST + "\"", "\"status\":200");
        }
    }
}
