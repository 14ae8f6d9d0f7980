package dev.sallyport.cli;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The harness of the {@code RunTools*Test} group: real tools (curl, wget, git, npm, pip, Debian's Maven, a JDK
 * program, Node, an agent-shaped chat client) inside a real {@code sallyport run} (the CLI in its own JVM, through
 * {@link CliProcess}), configured only as a user's project would be: files in the project folder, the tool's own
 * command line, and what the sandbox itself provides (the proxy variables, the trust bundle,
 * {@code JAVA_TOOL_OPTIONS}). The run gets no flag beyond {@code --policy}, {@code --workdir} and {@code --audit}
 * (where the user stands and where the record goes).
 *
 * <p>The upstreams are {@link HttpsSite}s (or servers of their own, such as npm's registry: {@link #upstream}) on
 * {@code 127.0.0.1}, each under a name of the reserved {@code .test}
 * domain with a certificate from a per-run {@link TestPki} that the policy's {@code upstream.trust} names. The names
 * resolve to loopback for the run's proxy alone: the CLI's JVM reads them from a hosts file (the JDK's
 * {@code jdk.net.hosts.file} property), standing in for the DNS of a user's machine. Inside the sandbox nothing
 * resolves a name (it has no DNS); every tool reaches its site through the proxy by name, as it would reach a real
 * registry, and nothing needs {@code NO_PROXY} changed. The policy allows each site by host name and port, and its
 * loopback address in {@code network.allow_private} (the default deny list refuses loopback).
 *
 * <p>Each test passes as root and as a normal user: CI runs the group in its root pass (the command then runs as
 * another user, the workspace shown to it through an idmapped mount) and again in
 * {@code scripts/test-unprivileged} (all of it as a normal user).
 */
final class ToolRun implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofMinutes(3);

    private final Path dir;
    private final TestPki pki = TestPki.create();
    private final List<HttpsSite> sites = new ArrayList<>();
    private final Map<String, Upstream> upstreams = new LinkedHashMap<>();
    private final List<String> jvmOptions = new ArrayList<>();
    private boolean canary;

    private record Upstream(int port, String ruleKeys) {}

    ToolRun(Path dir) {
        this.dir = dir;
    }

    /** Starts an HTTPS site for {@code host} (a name the run's proxy resolves to 127.0.0.1), allowed by the policy. */
    HttpsSite site(String host) {
        return site(host, "");
    }

    /** {@link #site(String)} whose rule has {@code ruleKeys} too (YAML lines: {@code allow_encoded_slash: true}). */
    HttpsSite site(String host, String ruleKeys) {
        HttpsSite site = HttpsSite.start(certificate(host));
        sites.add(site);
        upstream(host, site.port(), ruleKeys);
        return site;
    }

    /** A certificate for {@code host} from the test PKI the policy trusts, for an upstream that is not a site. */
    TestPki.Issued certificate(String host) {
        return pki.issue(host);
    }

    /**
     * Names an upstream the test started on {@code 127.0.0.1:port} {@code host} for the run's proxy, and allows it
     * with a rule of its own that has {@code ruleKeys} too.
     */
    void upstream(String host, int port, String ruleKeys) {
        upstreams.put(host, new Upstream(port, ruleKeys));
    }

    /** Every later run's proxy resolves through {@code resolver} the names that are not the test's upstreams. */
    void resolveThrough(CanaryResolver resolver) {
        jvmOptions.add(resolver.jvmOption());
        canary = true;
    }

    /** {@code https://HOST:PORT} of a started site or upstream. */
    String origin(String host) {
        return "https://" + host + ":" + upstreams.get(host).port();
    }

    /** The project folder the command runs in (created on first use). */
    Path workspace() {
        try {
            return Files.createDirectories(dir.resolve("ws"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The run's audit log as text (empty before a run). */
    String audit() throws IOException {
        Path audit = dir.resolve("audit.jsonl");
        return Files.exists(audit) ? Files.readString(audit) : "";
    }

    /**
     * {@code sallyport run --policy P --workdir WS --audit A -- sh -c SCRIPT}, with {@code env} added to the CLI's
     * environment (a secret's value, a HOME) and {@code policyMore} appended to the policy (top-level keys, such as
     * {@code secrets:}). A {@code HOME} in {@code env} is the CLI's home folder as a whole: its JVM's
     * {@code user.home} too, as on a machine where the two name one folder.
     */
    ExternalProcess.Result run(String policyMore, Map<String, String> env, String script) throws IOException {
        return runWith(List.of(), policyMore, env, script);
    }

    /** {@link #run} with {@code flags} added to {@code sallyport run}'s. */
    ExternalProcess.Result runWith(List<String> flags, String policyMore, Map<String, String> env, String script)
            throws IOException {
        Path policy = Files.createDirectories(dir.resolve("policy")).resolve("policy.yaml");
        Files.writeString(policy, policy(policy.getParent()) + policyMore);
        Path hosts = dir.resolve("hosts");
        Files.writeString(hosts, upstreams.keySet().stream().map(host -> "127.0.0.1 " + host + "\n")
                .collect(Collectors.joining()));
        Map<String, String> cliEnv = new HashMap<>(env);
        cliEnv.putIfAbsent("SALLYPORT_HOME", dir.resolve("state").toString());
        List<String> jvm = new ArrayList<>(jvmOptions);
        jvm.add("-D" + (canary ? CanaryResolverProvider.HOSTS : "jdk.net.hosts.file") + "=" + hosts);
        if (env.containsKey("HOME")) {
            jvm.add("-Duser.home=" + env.get("HOME"));
        }
        List<String> args = new ArrayList<>(List.of("run", "--policy", policy.toString(), "--workdir",
                workspace().toString(), "--audit", dir.resolve("audit.jsonl").toString()));
        args.addAll(flags);
        args.addAll(List.of("--", "sh", "-c", script));
        return CliProcess.run(jvm, cliEnv, TIMEOUT, args.toArray(String[]::new));
    }

    /** The policy's folder is watched for changes: the audit log and the workspace lie elsewhere. */
    private String policy(Path folder) {
        List<String> loopback = new ArrayList<>();
        StringBuilder rules = new StringBuilder();
        upstreams.forEach((host, upstream) -> {
            loopback.add("\"127.0.0.1:" + upstream.port() + "\"");
            rules.append("""
                      - name: %s
                        hosts: [%s]
                        ports: [%d]
                    """.formatted(host, host, upstream.port()));
            upstream.ruleKeys().lines().forEach(line -> rules.append("    ").append(line).append('\n'));
        });
        return """
                upstream:
                  trust: [%s]
                network:
                  deny: default
                  allow_private: [%s]
                rules:
                """.formatted(pki.rootPem(folder), String.join(", ", loopback)) + rules;
    }

    @Override
    public void close() {
        sites.forEach(HttpsSite::close);
    }
}
