package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.tools.HttpsSite;
import dev.sallyport.testing.tools.StaticFolder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Debian's {@code mvn} inside {@code sallyport run}: {@code mvn package} of a one-class jar project whose
 * {@code .mvn/maven.config} names the project's {@code settings.xml}, which mirrors every repository to
 * {@code maven.example.test}. That remote is this machine's own Maven repository served read-only, so the run
 * (its {@code ~/.m2} empty, as in every run) downloads through the proxy the plugins this build itself used; the
 * project pins their versions to this build's (read from the root pom) so they are there. See {@link ToolRun}.
 */
class RunToolsMavenTest {
    private static final String HOST = "maven.example.test";
    private static final List<String> PLUGINS = List.of("maven-resources-plugin", "maven-compiler-plugin",
            "maven-surefire-plugin", "maven-jar-plugin");

    @TempDir
    Path dir;

    @Test
    void mvnPackageResolvesItsPluginsThroughTheProxy() throws IOException {
        // the unprivileged pass builds with a copy of the repository of its own (scripts/test-unprivileged)
        String own = System.getenv("SALLYPORT_TEST_MAVEN_REPOSITORY");
        Path local = own != null && !own.isEmpty() ? Path.of(own)
                : Path.of(System.getProperty("user.home"), ".m2", "repository");
        Prerequisites.require("a filled Maven repository", Files.isDirectory(local),
                local + " holds the plugins this build ran (run the build once)");
        Prerequisites.require("javac", Files.isExecutable(Path.of("/usr/bin/javac")),
                "Debian's mvn compiles with the distribution's JDK (apt-get install default-jdk-headless)");
        Map<String, String> versions = pluginVersions();
        try (ToolRun tools = new ToolRun(dir)) {
            HttpsSite site = tools.site(HOST).route("/", new StaticFolder(local, "/"));
            Path project = tools.workspace();
            writeProject(project, versions, tools.origin(HOST));

            ExternalProcess.Result run = tools.run("", Map.of(), "mvn package > build.log 2>&1 || "
                    + "{ status=$?; cat build.log >&2; exit $status; }");

            assertThat(run.exit()).as(run.stderr()).isZero();
            try (ZipFile jar = new ZipFile(project.resolve("target/hello-1.0.jar").toFile())) {
                assertThat(jar.getEntry("hello/Hello.class")).as("the class in the jar").isNotNull();
            }
            String jarPlugin = "maven-jar-plugin/" + versions.get("maven-jar-plugin");
            assertThat(site.requests()).extracting(HttpsSite.Request::target)
                    .anyMatch(t -> t.contains("/org/apache/maven/plugins/" + jarPlugin + "/"));
            assertThat(site.requests()).extracting(HttpsSite.Request::method).containsOnly("GET");
            assertThat(tools.audit()).contains("\"host\":\"" + HOST + "\"");
        }
    }

    private static void writeProject(Path project, Map<String, String> versions, String origin) throws IOException {
        String plugins = versions.entrySet().stream().map(e -> """
                        <plugin>
                          <groupId>org.apache.maven.plugins</groupId>
                          <artifactId>%s</artifactId>
                          <version>%s</version>
                        </plugin>
                """.formatted(e.getKey(), e.getValue())).collect(Collectors.joining());
        Files.writeString(project.resolve("pom.xml"), """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>test.sallyport</groupId>
                  <artifactId>hello</artifactId>
                  <version>1.0</version>
                  <packaging>jar</packaging>
                  <properties>
                    <maven.compiler.release>17</maven.compiler.release>
                    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
                  </properties>
                  <build>
                    <pluginManagement>
                      <plugins>
                %s      </plugins>
                    </pluginManagement>
                  </build>
                </project>
                """.formatted(plugins));
        Path source = Files.createDirectories(project.resolve("src/main/java/hello"));
        Files.writeString(source.resolve("Hello.java"), """
                package hello;

                public class Hello {
                    public static void main(String[] args) {
                        System.out.println("hello from the sandbox");
                    }
                }
                """);
        Path config = Files.createDirectories(project.resolve(".mvn"));
        Files.writeString(config.resolve("maven.config"), "--batch-mode\n--settings=.mvn/settings.xml\n");
        Files.writeString(config.resolve("settings.xml"), """
                <settings>
                  <mirrors>
                    <mirror>
                      <id>project-repository</id>
                      <mirrorOf>*</mirrorOf>
                      <url>%s/</url>
                    </mirror>
                  </mirrors>
                </settings>
                """.formatted(origin));
    }

    /** The versions this build's root pom pins for {@link #PLUGINS}: they are in the local repository. */
    private static Map<String, String> pluginVersions() throws IOException {
        Path rootPom = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent().resolve("pom.xml");
        String pom = Files.readString(rootPom);
        Map<String, String> versions = new LinkedHashMap<>();
        for (String plugin : PLUGINS) {
            Matcher m = Pattern.compile("<artifactId>" + plugin + "</artifactId>\\s*<version>([^<]+)</version>")
                    .matcher(pom);
            assertThat(m.find()).as("%s pins a version of %s", rootPom, plugin).isTrue();
            versions.put(plugin, m.group(1));
        }
        return versions;
    }
}
