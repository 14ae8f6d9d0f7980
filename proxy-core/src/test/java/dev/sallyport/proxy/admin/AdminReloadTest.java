package dev.sallyport.proxy.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.ProxySettings;
import dev.sallyport.policy.Verdict;
import dev.sallyport.proxy.audit.AuditLog;
import dev.sallyport.proxy.metrics.ProxyMetrics;
import dev.sallyport.proxy.reload.PolicyHolder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin listener through its public API, with a real policy file, holder, metrics and audit log. */
class AdminReloadTest {

    private static final String TOKEN = "reload-token-1234";

    @TempDir
    Path dir;

    private EventLoopGroup group;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ProxyMetrics metrics = new ProxyMetrics();
    private final ByteArrayOutputStream auditBytes = new ByteArrayOutputStream();
    private AuditLog audit;
    private PolicyHolder holder;
    private AdminServer server;
    private Path file;

    @BeforeEach
    void start() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        file = dir.resolve("policy.yaml");
        Files.writeString(file, """
                rules:
                  - name: a
                    hosts: [a.example]
                """);
        audit = AuditLog.to(auditBytes, InstantSource.system(), metrics);
        holder = new PolicyHolder(PolicyEngine.compile(PolicyLoader.load(file)), file,
                dev.sallyport.proxy.events.ProxyEventListener.all(audit, metrics));
        server = AdminServer.start(new HostPort("127.0.0.1", 0), group, metrics, holder, () -> true, audit, TOKEN);
    }

    @AfterEach
    void stop() {
        server.close();
        holder.close();
        audit.close();
        metrics.close();
        client.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void postReloadAppliesAGoodFileAndRefusesABrokenOne() throws Exception {
        Files.writeString(file, """
                rules:
                  - name: b
                    hosts: [b.example]
                """);
        HttpResponse<String> ok = reload(TOKEN);
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(holder.current().onConnect("b.example", 443, null).verdict()).isEqualTo(Verdict.ALLOW);

        Files.writeString(file, """
                rules:
                  - name: c
                    hosts: [c.example]
                    bogus: 1
                """);
        HttpResponse<String> bad = reload(TOKEN);
        assertThat(bad.statusCode()).isEqualTo(422);
        assertThat(bad.body()).startsWith("reload failed; old policy kept\n" + file + ":4:");
        assertThat(holder.current().onConnect("b.example", 443, null).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(holder.current().onConnect("c.example", 443, null).verdict()).isEqualTo(Verdict.DENY);

        assertThat(reload("wrong").statusCode()).isEqualTo(401);

        audit.flush();
        assertThat(auditBytes.toString(StandardCharsets.US_ASCII).lines())
                .hasSize(2)
                .satisfiesExactly(
                        l -> assertThat(l).contains("\"event\":\"reload\",\"result\":\"success\""),
                        l -> assertThat(l).contains("\"event\":\"reload\",\"result\":\"failure\"", ":4:"));
        String text = get("/metrics").body();
        assertThat(text).contains("sallyport_policy_reloads_total{result=\"success\"} 1.0",
                "sallyport_policy_reloads_total{result=\"failure\"} 1.0");
    }

    @Test
    void readyzIs503WhileTheAuditLogIsNotAccepting() throws Exception {
        assertThat(get("/readyz").statusCode()).isEqualTo(200);
        audit.close();   // a closed log accepts nothing
        HttpResponse<String> r = get("/readyz");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("audit log");
    }

    @Test
    void tokenComesFromTheEnvironmentOrAFileAndFailsClosed() throws Exception {
        ProxySettings none = ProxySettings.DEFAULTS;
        assertThat(AdminServer.configuredToken(none, Map.of())).isEmpty();

        ProxySettings env = new ProxySettings(none.listen(), none.admin(), none.limits(), none.timeouts(),
                "SALLYPORT_ADMIN_TOKEN", null);
        assertThat(AdminServer.configuredToken(env, Map.of("SALLYPORT_ADMIN_TOKEN", " t0ken\n"))).contains("t0ken");
        assertThatThrownBy(() -> AdminServer.configuredToken(env, Map.of()))
                .hasMessage("proxy.admin_token.env: environment variable SALLYPORT_ADMIN_TOKEN is unset or empty"
                        + " (expected: the admin token)");

        Path tokenFile = dir.resolve("token");
        ProxySettings fromFile = new ProxySettings(none.listen(), none.admin(), none.limits(), none.timeouts(),
                null, tokenFile);
        assertThatThrownBy(() -> AdminServer.configuredToken(fromFile, Map.of()))
                .hasMessageStartingWith("proxy.admin_token.file: cannot read " + tokenFile);
        Files.writeString(tokenFile, "file-token\n");
        assertThat(AdminServer.configuredToken(fromFile, Map.of())).contains("file-token");
    }

    @Test
    void bindingATakenPortIsOneClearError() {
        HostPort taken = new HostPort("127.0.0.1", server.address().getPort());
        assertThatThrownBy(() -> AdminServer.start(taken, group, metrics, holder, () -> true, null))
                .hasMessageStartingWith("proxy.admin: cannot listen on 127.0.0.1:" + taken.port() + ": ")
                .hasMessageEndingWith("(expected: a free local address and port)");
    }

    private HttpResponse<String> reload(String token) throws Exception {
        return client.send(HttpRequest.newBuilder(uri("/reload")).header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.address().getPort() + path);
    }
}
