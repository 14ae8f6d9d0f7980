package dev.sallyport.proxy.reload;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.GitRule;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.proxy.inject.SecretStore;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.Verdict;
import dev.sallyport.proxy.audit.AuditLog;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.metrics.ProxyMetrics;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.Prerequisites;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyHolderTest {

    @TempDir
    Path dir;

    private final List<ProxyEvent.Reloaded> reloads = new CopyOnWriteArrayList<>();
    private final ByteArrayOutputStream stderrBytes = new ByteArrayOutputStream();
    private final PrintStream stderr = new PrintStream(stderrBytes, true, StandardCharsets.UTF_8);
    private PolicyHolder holder;

    @AfterEach
    void close() {
        if (holder != null) {
            holder.close();
        }
    }

    static String allowing(String host) {
        return """
                proxy:
                  listen: 127.0.0.1:3128
                rules:
                  - name: allow-%s
                    hosts: [%s]
                """.formatted(host.replace('.', '-'), host);
    }

    private static final String BROKEN = """
            rules:
              - name: bad
                hosts: ["*"]
              - name: bad2
                hosts: [ok.example]
                ports: [99999]
            """;

    private Path policy(String yaml) throws Exception {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    private PolicyHolder holder(Path file, ProxyEventListener extra) throws Exception {
        ProxyEventListener record = e -> {
            if (e instanceof ProxyEvent.Reloaded r) {
                reloads.add(r);
            }
        };
        holder = new PolicyHolder(new Snapshot(PolicyEngine.compile(PolicyLoader.load(file)), SecretStore.empty()), file,
                ProxyEventListener.all(record, extra), InstantSource.system(), stderr);
        return holder;
    }

    private Verdict connect(String host) {
        return holder.current().onConnect(host, 443, null).verdict();
    }

    @Test
    void goodFileSwapsTheEngine() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});
        assertThat(connect("a.example")).isEqualTo(Verdict.ALLOW);
        assertThat(connect("b.example")).isEqualTo(Verdict.DENY);

        Files.writeString(file, allowing("b.example"));
        ReloadResult result = holder.reload();

        assertThat(result.success()).isTrue();
        assertThat(result.errors()).isEmpty();
        assertThat(connect("a.example")).isEqualTo(Verdict.DENY);
        assertThat(connect("b.example")).isEqualTo(Verdict.ALLOW);
        assertThat(reloads).singleElement().satisfies(r -> {
            assertThat(r.result()).isEqualTo("success");
            assertThat(r.source()).isEqualTo(file.toAbsolutePath().toString());
        });
    }

    @Test
    void aReloadAppliesTheNewFilesRegistriesAndGitEntries() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});
        assertThat(holder.current().policy().registries()).isEmpty();

        Files.writeString(file, allowing("git.example") + """
                registries:
                  - name: npm
                    ecosystem: npm
                    hosts: [registry.example]
                    min_release_age: 7d
                git:
                  - name: agent
                    hosts: [git.example]
                    push: deny
                """);
        assertThat(holder.reload().success()).isTrue();

        // a reload once rebuilt the policy without these sections: the filter and the push rules went quietly
        assertThat(holder.current().policy().registries()).extracting(Registry::name).containsExactly("npm");
        assertThat(holder.current().policy().git()).extracting(GitRule::name).containsExactly("agent");
    }

    @Test
    void brokenFileKeepsTheOldPolicyAndReportsEveryErrorWithLines() throws Exception {
        Path file = policy(allowing("a.example"));
        ProxyMetrics metrics = new ProxyMetrics();
        ByteArrayOutputStream auditBytes = new ByteArrayOutputStream();
        try (metrics; AuditLog audit = AuditLog.to(auditBytes, InstantSource.system(), metrics)) {
            holder(file, ProxyEventListener.all(audit, metrics));

            Files.writeString(file, BROKEN);
            ReloadResult result = holder.reload();
            audit.flush();

            assertThat(result.success()).isFalse();
            assertThat(result.errors()).hasSizeGreaterThanOrEqualTo(2)
                    .allSatisfy(e -> assertThat(e).startsWith(file.toString() + ":").contains("(expected: "));
            assertThat(result.errors()).anySatisfy(e -> assertThat(e).startsWith(file + ":3:"));
            assertThat(connect("a.example")).isEqualTo(Verdict.ALLOW);
            assertThat(connect("ok.example")).isEqualTo(Verdict.DENY);

            String err = stderrBytes.toString(StandardCharsets.UTF_8);
            assertThat(err).contains("policy reload from " + file.toAbsolutePath() + " failed; the old policy stays")
                    .contains(result.errors().get(0));
            assertThat(reloads).singleElement().satisfies(r -> {
                assertThat(r.result()).isEqualTo("failure");
                assertThat(r.errors()).isEqualTo(result.errors());
            });
            String line = auditBytes.toString(StandardCharsets.US_ASCII);
            assertThat(line).startsWith("{\"ts\":\"").contains("\"event\":\"reload\",\"result\":\"failure\"",
                    "\"errors\":[\"" + file);
            assertThat(metrics.scrape()).contains("sallyport_policy_reloads_total{result=\"failure\"} 1.0");
        }
    }

    /** A writer truncates the policy, then writes it: caught in between, the reload must not apply "nothing". */
    @Test
    void anEmptyFileIsRefusedAndTheOldPolicyStays() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});
        for (String blank : new String[] {"", "\n  \n"}) {
            Files.writeString(file, blank);
            ReloadResult result = holder.reload();
            assertThat(result.success()).isFalse();
            assertThat(result.errors()).singleElement().asString().contains(file + ": is empty", "expected: a policy");
            assertThat(connect("a.example")).as("the policy in force").isEqualTo(Verdict.ALLOW);
        }
    }

    @Test
    void changedListenAddressKeepsTheRunningOneAndSaysARestartIsNeeded() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});

        Files.writeString(file, allowing("b.example").replace("3128", "4128"));
        ReloadResult result = holder.reload();

        assertThat(result.success()).isTrue();
        assertThat(result.notes()).singleElement().asString()
                .contains("proxy.listen changed (127.0.0.1:3128 -> 127.0.0.1:4128)", "restart");
        assertThat(holder.current().policy().proxy().listen().port()).isEqualTo(3128);
        assertThat(connect("b.example")).isEqualTo(Verdict.ALLOW);
        assertThat(stderrBytes.toString(StandardCharsets.UTF_8)).contains("proxy.listen changed");
    }

    @Test
    void withoutAFileReloadFailsClearly() {
        holder = new PolicyHolder(new Snapshot(PolicyEngine.compile(dev.sallyport.policy.Policy.defaults()),
                SecretStore.empty()), null,
                e -> {
                    if (e instanceof ProxyEvent.Reloaded r) {
                        reloads.add(r);
                    }
                }, InstantSource.system(), stderr);

        ReloadResult result = holder.reload();

        assertThat(result.success()).isFalse();
        assertThat(result.errors()).singleElement().asString().contains("no policy file", "--config");
        assertThat(reloads).singleElement().extracting(ProxyEvent.Reloaded::result).isEqualTo("failure");
    }

    @Test
    void fileChangesTriggerOneReloadPerRealChange() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});
        holder.watchFileAndSighup();

        // an editor that writes a temp file and renames it over the policy
        Path temp = dir.resolve(".policy.yaml.swp");
        Files.writeString(temp, allowing("b.example"));
        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        await(() -> reloads.size() == 1);   // the event follows the swap
        assertThat(connect("b.example")).isEqualTo(Verdict.ALLOW);

        // same content again (touch): no reload; then a real in-place edit: one more
        Files.writeString(file, allowing("b.example"));
        Files.writeString(file, allowing("c.example"));
        await(() -> reloads.size() >= 2);
        assertThat(connect("c.example")).isEqualTo(Verdict.ALLOW);
        assertThat(reloads).allSatisfy(r -> assertThat(r.result()).isEqualTo("success"));

        // a broken edit is reported once and keeps c; a spurious reload of b or c would show up as reloads[2]
        Files.writeString(file, BROKEN);
        await(() -> reloads.size() >= 3);
        assertThat(reloads.get(2).result()).isEqualTo("failure");
        assertThat(connect("c.example")).isEqualTo(Verdict.ALLOW);
    }

    /**
     * The shape the kubelet gives a mounted ConfigMap: {@code policy.yaml -> ..data/policy.yaml}, {@code ..data ->
     * ..TIMESTAMP}; an update writes a new {@code ..TIMESTAMP} folder, points {@code ..data_tmp} at it, renames that
     * over {@code ..data} (the one atomic step) and removes the old folder. The file the proxy was given is never
     * written itself.
     */
    @Test
    void aKubernetesConfigMapUpdateThroughItsSymlinkSwapReloads() throws Exception {
        Path mount = Files.createDirectory(dir.resolve("configmap"));
        Path first = Files.createDirectory(mount.resolve("..2026_12_01_20_30_00.000000001"));
        Files.writeString(first.resolve("policy.yaml"), allowing("a.example"));
        Files.createSymbolicLink(mount.resolve("..data"), first.getFileName());
        Path file = Files.createSymbolicLink(mount.resolve("policy.yaml"), Path.of("..data/policy.yaml"));
        holder(file, e -> {});
        holder.watchFileAndSighup();
        assertThat(connect("b.example")).isEqualTo(Verdict.DENY);

        Path second = Files.createDirectory(mount.resolve("..2026_12_01_20_31_00.000000002"));
        Files.writeString(second.resolve("policy.yaml"), allowing("b.example"));
        Path tmp = Files.createSymbolicLink(mount.resolve("..data_tmp"), second.getFileName());
        Files.move(tmp, mount.resolve("..data"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.delete(first.resolve("policy.yaml"));
        Files.delete(first);

        await(() -> !reloads.isEmpty());
        assertThat(reloads.getFirst().result()).isEqualTo("success");
        assertThat(connect("b.example")).isEqualTo(Verdict.ALLOW);

        // and the next update, after the folder the first link pointed into is gone
        Path third = Files.createDirectory(mount.resolve("..2026_12_01_20_32_00.000000003"));
        Files.writeString(third.resolve("policy.yaml"), allowing("c.example"));
        tmp = Files.createSymbolicLink(mount.resolve("..data_tmp"), third.getFileName());
        Files.move(tmp, mount.resolve("..data"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        await(() -> reloads.size() >= 2);
        assertThat(connect("c.example")).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void unrelatedFilesInTheFolderDoNotReload() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});
        holder.watchFileAndSighup();

        Files.writeString(dir.resolve("audit.jsonl"), "{}\n");
        Files.writeString(file, allowing("d.example"));
        await(() -> !reloads.isEmpty());
        assertThat(connect("d.example")).isEqualTo(Verdict.ALLOW);

        Files.writeString(dir.resolve("audit.jsonl"), "{}\n{}\n");
        Files.writeString(file, allowing("e.example"));
        await(() -> reloads.size() >= 2);
        assertThat(reloads).hasSize(2);   // nothing in between for the audit file
    }

    @Test
    void sighupReloads() throws Exception {
        Path file = policy(allowing("a.example"));
        holder(file, e -> {});
        holder.watchFileAndSighup();
        Prerequisites.require("SIGHUP", holder.sighupInstalled(), "a JVM that lets the proxy handle SIGHUP");

        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(ProcessHandle.current().pid()))
                .redirectErrorStream(true).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();

        await(() -> reloads.size() == 1);
        assertThat(reloads.getFirst().result()).isEqualTo("success");
    }

    @Test
    void sighupStillReloadsAnOpenProxyAfterOneStartedBeforeItCloses() throws Exception {
        Path file = policy(allowing("a.example"));
        PolicyHolder first = holder(file, e -> {});
        first.watchFileAndSighup();
        Prerequisites.require("SIGHUP", first.sighupInstalled(), "a JVM that lets the proxy handle SIGHUP");
        holder(file, e -> {});   // the second, closed after the test
        holder.watchFileAndSighup();
        first.close();   // the first to open closes first: the second must keep the signal
        reloads.clear();

        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(ProcessHandle.current().pid()))
                .redirectErrorStream(true).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();

        await(() -> reloads.size() == 1);
        assertThat(reloads.getFirst().result()).isEqualTo("success");
    }

    private static void await(BooleanSupplier condition) {
        Await.until("the reload was reported", Duration.ofSeconds(20), condition);
    }
}
