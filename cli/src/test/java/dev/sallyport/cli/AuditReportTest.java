package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.audit.AuditKey;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code audit report} of a real proxy's log, opened in a real headless browser (Debian's Chromium): the page
 * renders without a script or an external asset, and its figures are those {@code audit summary} prints.
 */
class AuditReportTest {
    /** Chromium alone has taken over a minute to start on a machine loaded by parallel builds. */
    private static final Duration CHROMIUM_BOUND = Duration.ofSeconds(180);

    @TempDir
    Path dir;

    @Test
    void theReportRendersInHeadlessChromiumAndItsFiguresMatchTheSummary() throws Exception {
        Prerequisites.require("chromium", Files.isExecutable(Path.of("/usr/bin/chromium")),
                "Debian's chromium renders the report (scripts/install-deps.sh installs it)");
        RealAuditLog.Written w = RealAuditLog.write(dir, AuditKey.generate(), RealAuditLog.OK_PATHS, List.of(List.of(List.of("/ok/1", "/ok/2", "/denied"), List.of("/ok/3", "/also-denied")),
                List.of(List.of("/ok/4"))));
        String log = w.log().toString();
        Path html = dir.resolve("report.html");
        Path json = dir.resolve("report.json");
        CliRun report = CliRun.of("audit", "report", "--out", html.toString(), "--json", json.toString(), log);
        assertThat(report.exit()).as(report.err()).isZero();
        String page = Files.readString(html);
        assertThat(page).doesNotContain("<script", "src=", "href=", "url(", "@import");

        CliRun summary = CliRun.of("audit", "summary", log);
        Matcher counts = Pattern.compile(": (\\d+) records, (\\d+) exchanges, (\\d+) tunnels?").matcher(summary.out());
        assertThat(counts.find()).as(summary.out()).isTrue();
        long denied = Pattern.compile("(?m)^ +(\\d+)  .*\\(path_not_allowed\\)$").matcher(summary.out()).results()
                .mapToLong(m -> Long.parseLong(m.group(1))).sum();
        assertThat(denied).isEqualTo(2);

        ExternalProcess.Result dom = ExternalProcess.run(CHROMIUM_BOUND, List.of("chromium", "--headless",
                "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + dir.resolve("profile"),
                "--dump-dom", html.toUri().toString()), null);
        assertThat(dom.exit()).as(dom.stderr()).isZero();
        String rendered = dom.stdout();
        assertThat(figure(rendered, "records")).isEqualTo(counts.group(1));
        assertThat(figure(rendered, "exchanges")).isEqualTo(counts.group(2));
        assertThat(figure(rendered, "tunnels")).isEqualTo(counts.group(3));
        assertThat(figure(rendered, "denied")).isEqualTo(Long.toString(denied));
        assertThat(rendered).contains("<h2>Denials by reason</h2>").contains("(path_not_allowed)")
                .contains("127.0.0.1:" + w.upstreamPort());

        Path png = dir.resolve("report.png");
        ExternalProcess.Result shot = ExternalProcess.run(CHROMIUM_BOUND, List.of("chromium", "--headless",
                "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + dir.resolve("profile"),
                "--window-size=1100,1400", "--screenshot=" + png, html.toUri().toString()), null);
        assertThat(shot.exit()).as(shot.stderr()).isZero();
        assertThat(Files.size(png)).as("a screenshot of the rendered page").isGreaterThan(10_000);

        assertThat(Files.readString(json)).contains("\"records\" : " + counts.group(1))
                .contains("\"exchanges\" : " + counts.group(2)).contains("\"(path_not_allowed)\"");
    }

    private static String figure(String dom, String id) {
        Matcher m = Pattern.compile("id=\"" + id + "\">(\\d+)<").matcher(dom);
        assertThat(m.find()).as("figure %s in the rendered page", id).isTrue();
        return m.group(1);
    }
}
