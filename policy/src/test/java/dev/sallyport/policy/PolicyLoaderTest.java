package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyLoaderTest {

    /** The policy of docs/REFERENCE.md, with example host names. */
    static final String CONTRACT_EXAMPLE = """
            proxy:
              listen: 127.0.0.1:3128        # explicit proxy: absolute-form HTTP and CONNECT
              admin: 127.0.0.1:9901
            ca: {cert: ca/ca.pem, key: ca/ca-key.pem}
            audit: {path: audit.jsonl}      # "-" for stdout
            mode: enforce
            upstream:
              trust: [system]
            network:
              deny: default
              allow_private: []
            rules:                          # first match wins; no match means deny
              - name: npm-read
                hosts: [registry.example.com]
                ports: [443]                # default [443]
                methods: [GET, HEAD]        # default: any
              - name: github-api
                hosts: [api.github.example]
                paths: ["/repos/acme/**"]   # '*' one segment, '**' any depth
              - name: no-uploads
                action: deny
                hosts: ["*.s3.example.com"]
                methods: [PUT, POST]
              - name: internal-db
                cidrs: [10.20.0.0/16]
                ports: [5432]
                tls: passthrough
            secrets:
              - name: GITHUB_TOKEN
                from: env:GITHUB_TOKEN      # or file:/run/secrets/github
                hosts: [api.github.example, github.example]
                headers: [Authorization]
            """;

    private static PolicyException problems(String yaml) {
        return catchThrowableOfType(PolicyException.class, () -> PolicyLoader.parse(yaml, "policy.yaml"));
    }

    private static List<String> where(PolicyException e) {
        return e.problems().stream().map(p -> p.line() + ":" + p.column() + " " + p.path()).toList();
    }

    @Test
    void readsTheContractExampleWithPathsRelativeToTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("sub/policy.yaml");
        Files.createDirectories(file.getParent());
        Files.writeString(file, CONTRACT_EXAMPLE);
        Policy p = PolicyLoader.load(file);
        Path base = file.toAbsolutePath().getParent();
        assertThat(p.source()).isEqualTo(file.toAbsolutePath());
        assertThat(p.ca().cert()).isEqualTo(base.resolve("ca/ca.pem"));
        assertThat(p.ca().key()).isEqualTo(base.resolve("ca/ca-key.pem"));
        assertThat(p.audit().path()).isEqualTo(base.resolve("audit.jsonl").toString());
        assertThat(p.mode()).isEqualTo(Mode.ENFORCE);
        assertThat(p.network().deny()).isEqualTo(DefaultDeny.NETWORKS);
        assertThat(p.rules()).extracting(Rule::name).containsExactly("npm-read", "github-api", "no-uploads",
                "internal-db");
        assertThat(p.rules()).extracting(Rule::line).containsExactly(13, 17, 20, 24);
        Rule npm = p.rules().getFirst();
        assertThat(npm.methods()).containsExactlyInAnyOrder("GET", "HEAD");
        assertThat(p.rules().get(1).ports()).containsExactly(443);
        assertThat(p.rules().get(3).tls()).isEqualTo(TlsMode.PASSTHROUGH);
        assertThat(p.rules().get(3).cidrs()).containsExactly(Cidr.parse("10.20.0.0/16"));
        SecretSpec s = p.secrets().getFirst();
        assertThat(s.from()).isEqualTo(new SecretSource.Env("GITHUB_TOKEN"));
        assertThat(s.hosts()).extracting(HostPattern::toString).containsExactly("api.github.example", "github.example");
        assertThat(s.placeholder()).isNull();
        assertThat(s.require()).isFalse();
        assertThat(s.allowCleartext()).as("allow_cleartext defaults to false").isFalse();
    }

    @Test
    void reportsEveryMistakeWithItsLineAndColumn() {
        PolicyException e = problems("""
                proxy:
                  listen: 127.0.0.1:99999
                  bogus: 1
                  timeouts: {connect: 10x}
                mode: enforce
                mode: audit
                rules:
                  - name: a
                    hosts: ["*.*.com"]
                  - name: b
                    hosts: [ok.example.com]
                    ports: [0x1bb]
                    tls: passthrough
                    methods: [GET]
                  - name: a
                    cidrs: [10.0.0.1/8]
                secrets:
                  - name: TOKEN
                    from: vault:x
                    hosts: [api.example.com]
                """);
        assertThat(where(e)).containsExactly(
                "2:11 proxy.listen",
                "3:3 proxy.bogus",
                "4:23 proxy.timeouts.connect",
                "6:1 mode",
                "9:13 rules[0].hosts[0]",
                "12:13 rules[1].ports[0]",
                "13:10 rules[1].tls",
                "15:11 rules[2].name",
                "16:13 rules[2].cidrs[0]",
                "18:5 secrets[0]",
                "19:11 secrets[0].from");
        assertThat(e.problems().get(4).toString()).isEqualTo("policy.yaml:9:13: rules[0].hosts[0]: '*.*.com' is not"
                + " a valid pattern (expected: an exact host name or '*.' followed by a name with at least two labels)");
        assertThat(e.problems().get(1).toString()).isEqualTo("policy.yaml:3:3: proxy.bogus: unknown key 'bogus'"
                + " (expected: one of admin, admin_token, dns, http2, limits, listen, metrics_identities, timeouts, transparent)");
        assertThat(e.problems().get(3).message()).isEqualTo("duplicate key 'mode'");
        assertThat(e.problems().get(7).message()).contains("already the name of the entry on line 8");
        assertThat(e.problems().get(8).message()).contains("host bits set").contains("10.0.0.0/8");
        assertThat(e.problems().get(9).message()).contains("has no 'headers'");
        assertThat(e.getMessage().lines()).hasSize(11).allMatch(l -> l.startsWith("policy.yaml:"));
    }

    @Test
    void aParentProxyIsReadWithWhereItsCredentialsAreAndWhatGoesDirect() throws Exception {
        Policy p = PolicyLoader.parse("""
                upstream:
                  proxy:
                    address: proxy.corp.example:3128
                    credentials: {file: /etc/sallyport/parent.auth}
                    no_proxy: [intranet.example, '*.corp.example', 10.0.0.0/8, 'fd00::1']
                """, "/etc/sallyport/policy.yaml");
        UpstreamProxy parent = p.upstream().proxy();
        assertThat(parent.address()).isEqualTo(new HostPort("proxy.corp.example", 3128));
        assertThat(parent.credentials()).isEqualTo(new SecretSource.File(Path.of("/etc/sallyport/parent.auth")));
        assertThat(p.upstream().systemTrust()).isTrue();
        assertThat(parent.direct("intranet.example")).isTrue();
        assertThat(parent.direct("git.corp.example")).isTrue();
        assertThat(parent.direct("corp.example")).as("'*.' never matches the name itself").isFalse();
        assertThat(parent.direct("10.1.2.3")).isTrue();
        assertThat(parent.direct("fd00::1")).isTrue();
        assertThat(parent.direct("11.0.0.1")).isFalse();
        assertThat(parent.direct("api.example.com")).isFalse();
        assertThat(PolicyLoader.parse("upstream: {proxy: {address: '10.0.0.1:8080', credentials: {env: PARENT}}}\n",
                "p.yaml").upstream().proxy().credentials()).isEqualTo(new SecretSource.Env("PARENT"));
        assertThat(PolicyLoader.parse("", "p.yaml").upstream().proxy()).isNull();
    }

    @Test
    void auditRotationBySizeOrTimeIsForFilesOnly() throws Exception {
        Policy p = PolicyLoader.parse("audit: {path: /var/log/sp/audit.jsonl, rotate_bytes: 104857600, rotate_every: 1h}\n",
                "policy.yaml");
        assertThat(p.audit()).isEqualTo(new AuditSettings("/var/log/sp/audit.jsonl", 104_857_600, Duration.ofHours(1)));
        assertThat(p.audit().rotates()).isTrue();
        assertThat(problems("audit: {path: '-', rotate_every: 1h}\n").getMessage())
                .isEqualTo("policy.yaml:1:34: audit: rotates stdout (expected: a file path to rotate)");
        assertThat(problems("audit: {path: /a.jsonl, rotate_bytes: 10}\n").getMessage())
                .startsWith("policy.yaml:1:39: audit.rotate_bytes: ");
        assertThat(problems("audit: {path: /a.jsonl, rotate_every: 0s}\n").getMessage())
                .isEqualTo("policy.yaml:1:39: audit.rotate_every: is zero (expected: a duration such as 250ms, 30s, 5m"
                        + " or 1h, above zero)");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
        "rules: [{name: x, hosts: [a.example], colour: red}]|1:39 rules[0].colour|unknown key 'colour'",
        "rules: [{name: x, hosts: [a.example], name: y}]|1:39 rules[0].name|duplicate key 'name'",
        "rules: [{name: x, hosts: a.example}]|1:26 rules[0].hosts|is 'a.example'",
        "rules: [{name: x}]|1:9 rules[0]|neither hosts nor cidrs",
        "rules: [{hosts: [a.example]}]|1:9 rules[0]|has no name",
        "rules: [{name: x, hosts: [], cidrs: []}]|1:9 rules[0]|neither hosts nor cidrs",
        "rules: [{name: x, hosts: [a.example], ports: []}]|1:46 rules[0].ports|is empty",
        "rules: [{name: x, hosts: [a.example], ports: [70000]}]|1:47 rules[0].ports[0]|out of range",
        "rules: [{name: x, hosts: [a.example], methods: [get]}]|1:49 rules[0].methods[0]|uppercase",
        "rules: [{name: x, hosts: [a.example], paths: [/a/*.js]}]|1:47 rules[0].paths[0]|star inside",
        "rules: [{name: x, hosts: [a.example], tls: passthrough, paths: [/a]}]|1:44 rules[0].tls|passthrough",
        "rules: [{name: x, hosts: [a.example], action: block}]|1:47 rules[0].action|'block' is not an action",
        "rules: [{name: x, hosts: [\"*\"]}]|1:27 rules[0].hosts[0]|not a valid pattern",
        "rules: [{name: x, hosts: [\"*.com\"]}]|1:27 rules[0].hosts[0]|top-level domain",
        "rules: [{name: x, hosts: [\"a@b.example\"]}]|1:27 rules[0].hosts[0]|userinfo",
        "rules: [{name: x, hosts: [\"a.example:443\"]}]|1:27 rules[0].hosts[0]|port",
        "rules: {name: x}|1:8 rules|is a mapping",
        "mode: yes|1:7 mode|'yes' is not a mode",
        "colour: red|1:1 colour|unknown key 'colour'",
        "proxy: {listen: 'localhost'}|1:17 proxy.listen|no port",
        "proxy: {listen: '::1:3128'}|1:17 proxy.listen|without brackets",
        "proxy: {limits: {max_connections: -1}}|1:35 proxy.limits.max_connections|not a plain decimal",
        "proxy: {limits: {max_body_bytes: 1_000}}|1:34 proxy.limits.max_body_bytes|not a plain decimal",
        "proxy: {limits: {max_connections_per_client: 0}}|1:46 proxy.limits.max_connections_per_client|0 is out of range",
        "proxy: {limits: {max_tunnels_per_client: x}}|1:42 proxy.limits.max_tunnels_per_client|is 'x'",
        "proxy: {limits: {max_exchanges_per_client: 0}}|1:44 proxy.limits.max_exchanges_per_client|0 is out of range",
        "proxy: {timeouts: {idle: 0s}}|1:26 proxy.timeouts.idle|is zero",
        "proxy: {admin_token: {env: A, file: b}}|1:22 proxy.admin_token|2 sources",
        "proxy: {http2: yes}|1:16 proxy.http2|is 'yes'",
        "proxy: {metrics_identities: [ci, -x]}|1:34 proxy.metrics_identities[1]|not an identity name",
        "proxy: {dns: '10.0.0.1'}|1:14 proxy.dns|no port",
        "proxy: {transparent: '127.0.0.1:3128'}|1:22 proxy.transparent|same address as proxy.listen",
        "proxy: {transparent: '10.0.0.1:3129', dns: '10.0.0.1:3129'}|1:44 proxy.dns|same address as proxy.transparent",
        "proxy: {listen: '127.0.0.1:3128', admin: '127.0.0.1:3128'}|1:42 proxy.admin|same address",
        "ca: {cert: a.pem}|1:5 ca|only one of cert and key",
        "upstream: {trust: []}|1:19 upstream.trust|is empty",
        "upstream: {proxy: {no_proxy: [a.example]}}|1:19 upstream.proxy|has no address",
        "upstream: {proxy: {address: 'parent.example'}}|1:29 upstream.proxy.address|no port",
        "upstream: {proxy: {address: 'parent.example:0'}}|1:29 upstream.proxy.address|port 0",
        "upstream: {proxy: {address: 'p.example:3128', credentials: {env: A, file: b}}}|1:60 upstream.proxy.credentials|2 sources",
        "upstream: {proxy: {address: 'p.example:3128', credentials: {env: '1A'}}}|1:66 upstream.proxy.credentials.env|environment variable",
        "upstream: {proxy: {address: 'p.example:3128', no_proxy: ['*.com']}}|1:58 upstream.proxy.no_proxy[0]|top-level domain",
        "upstream: {proxy: {address: 'p.example:3128', no_proxy: [10.0.0.1/8]}}|1:58 upstream.proxy.no_proxy[0]|host bits",
        "upstream: {proxy: {address: 'p.example:3128', user: x}}|1:47 upstream.proxy.user|unknown key 'user'",
        "network: {deny: all}|1:17 network.deny|not a deny list",
        "network: {deny: [default, 10.0.0.1/8]}|1:27 network.deny[1]|host bits",
        "network: {allow_private: ['10.0.0.0/8']}|1:27 network.allow_private[0]|no port",
        "network: {allow_private: ['fd00::1:443']}|1:27 network.allow_private[0]|without brackets",
        "network: {literal_addresses: all}|1:30 network.literal_addresses|'all' is not a choice here",
        "network: {literal_addresses: true}|1:30 network.literal_addresses|'true' is not a choice here",
        "secrets: [{name: 1X, from: env:X, hosts: [a.example], headers: [Authorization]}]|1:18 secrets[0].name|not a valid secret name",
        "secrets: [{name: X, from: env:1, hosts: [a.example], headers: [Authorization]}]|1:27 secrets[0].from|not an environment variable",
        "secrets: [{name: X, from: env:X, hosts: [], headers: [Authorization]}]|1:41 secrets[0].hosts|is empty",
        "secrets: [{name: X, from: env:X, hosts: [a.example], headers: [Bad Header]}]|1:64 secrets[0].headers[0]|not a header name",
        "secrets: [{name: X, from: env:X, hosts: [a.example], headers: [A], require: yes}]|1:77 secrets[0].require|is 'yes'",
        "secrets: [{name: X, from: env:X, hosts: [a.example], headers: [A], placeholder: short}]|1:81 secrets[0].placeholder|not a usable placeholder",
        "secrets: [{name: X, from: env:X, hosts: [a.example], headers: [A], allow_cleartext: yes}]|1:85 secrets[0].allow_cleartext|is 'yes'",
        "secrets: [{name: X, from: env:X, hosts: [a.example], headers: [A], allow_clear_text: true}]|1:68 secrets[0].allow_clear_text|unknown key 'allow_clear_text'",
        "rules: [{name: x, hosts: [a.example], allow_encoded_slash: yes}]|1:60 rules[0].allow_encoded_slash|is 'yes'",
        "rules: [{name: x, hosts: [a.example], tls: passthrough, allow_encoded_slash: true}]|1:44 rules[0].tls|allow_encoded_slash",
        "secrets: [{name: X, from: env:X, hosts: [a.example], headers: [A], elsewhere_on_own_hosts: sometimes}]|1:92 secrets[0].elsewhere_on_own_hosts|'sometimes' is not a choice here",
        "sandbox: {git: rw}|1:16 sandbox.git|'rw' is not a git access",
        "sandbox: {hold: [../.npmrc]}|1:18 sandbox.hold[0]|not a relative file path",
        "sandbox: {hold: [/etc/x]}|1:18 sandbox.hold[0]|not a relative file path",
        "sandbox: {scratch: [.config/opencode]}|1:21 sandbox.scratch[0]|not an absolute path or ~/PATH",
        "sandbox: {overlay: [/x]}|1:11 sandbox.overlay|unknown key 'overlay'",
    })
    void singleMistakes(String yaml, String where, String message) {
        PolicyException e = problems(yaml);
        assertThat(where(e)).containsExactly(where);
        assertThat(e.problems().getFirst().message()).contains(message);
        assertThat(e.problems().getFirst().expected()).isNotBlank();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
        "rules: [{name: x, hosts: [a.example]|1:37",
        "mode: [enforce|1:15",
        "a: b\\n c: d|2:3",
        "rules:\\n  - name: x\\n   hosts: [a]|3:4",
        "mode: '\\tenforce|1:16",
    })
    void yamlSyntaxErrorsHaveAPosition(String yaml, String position) {
        PolicyException e = problems(yaml.replace("\\n", "\n").replace("\\t", "\t"));
        assertThat(e.problems()).hasSize(1);
        PolicyProblem p = e.problems().getFirst();
        assertThat(p.message()).startsWith("YAML syntax error: ");
        assertThat(p.expected()).isEqualTo("valid YAML");
        assertThat(p.line() + ":" + p.column()).isEqualTo(position);
    }

    @Test
    void clientsNamesIdentitiesOnRulesAndSecretsAndABadNameIsOneLine() throws Exception {
        Policy p = PolicyLoader.parse("""
                rules:
                  - {name: ci-only, hosts: [deploy.example], clients: [ci-runner, job.2]}
                  - {name: anyone, hosts: [a.example], clients: []}
                secrets:
                  - {name: TOKEN, from: env:T, hosts: [deploy.example], headers: [Authorization], clients: [ci-runner]}
                """, "policy.yaml");
        assertThat(p.rules().get(0).clients()).containsExactlyInAnyOrder("ci-runner", "job.2");
        assertThat(p.rules().get(1).clients()).isEmpty();
        assertThat(p.secrets().getFirst().usableBy("ci-runner")).isTrue();
        assertThat(p.secrets().getFirst().usableBy("job.2")).isFalse();
        assertThat(p.secrets().getFirst().usableBy(Identities.ANONYMOUS)).isFalse();

        PolicyException e = problems("""
                rules:
                  - {name: r, hosts: [a.example], clients: ["bad name"]}
                secrets:
                  - {name: S, from: env:S, hosts: [a.example], headers: [Authorization], clients: [-x]}
                """);
        assertThat(e.problems()).extracting(PolicyProblem::toString).containsExactly(
                "policy.yaml:2:45: rules[0].clients[0]: 'bad name' is not an identity name (expected: "
                        + Identities.EXPECTED + ")",
                "policy.yaml:4:84: secrets[0].clients[0]: '-x' is not an identity name (expected: "
                        + Identities.EXPECTED + ")");
    }

    @Test
    void moreThanOneDocumentOrAMergeKeyIsRefused() {
        assertThat(problems("mode: enforce\n---\nmode: audit\n").problems().getFirst().line()).isEqualTo(2);
        PolicyException merge = problems("""
                rules:
                  - &base {name: a, hosts: [a.example]}
                  - <<: *base
                    name: b
                """);
        assertThat(where(merge)).first().isEqualTo("3:5 rules[1]");
        assertThat(merge.problems().getFirst().message()).contains("'<<'");
    }

    @Test
    void theSandboxSectionSaysHowRunsTreatGitToolConfigsAndScratchFolders() throws Exception {
        Policy p = PolicyLoader.parse("""
                sandbox:
                  git: read-only
                  hold: [.tool.toml, config/tool.yaml]
                  scratch: [~/.config/opencode, /opt/cache]
                """, "s.yaml");
        assertThat(p.sandbox()).isEqualTo(new SandboxSettings(SandboxSettings.GitAccess.READ_ONLY,
                List.of(".tool.toml", "config/tool.yaml"), List.of("~/.config/opencode", "/opt/cache")));
        assertThat(PolicyLoader.parse("mode: enforce\n", "d.yaml").sandbox()).isEqualTo(SandboxSettings.DEFAULTS);
        assertThat(SandboxSettings.DEFAULTS.git()).isEqualTo(SandboxSettings.GitAccess.WRITABLE);
    }

    @Test
    void anEmptyFileIsTheDefaultPolicy() throws Exception {
        Policy p = PolicyLoader.parse("", "empty.yaml");
        Policy d = Policy.defaults();
        assertThat(p.proxy()).isEqualTo(d.proxy());
        assertThat(p.rules()).isEmpty();
        assertThat(PolicyLoader.parse("# only a comment\n", "c.yaml").network()).isEqualTo(d.network());
    }

    @Test
    void defaults() {
        Policy d = Policy.defaults();
        assertThat(d.proxy().listen()).isEqualTo(new HostPort("127.0.0.1", 3128));
        assertThat(d.proxy().admin()).isEqualTo(new HostPort("127.0.0.1", 9901));
        assertThat(d.proxy().limits()).isEqualTo(new Limits(4096, 10_000, 32_768, 8192, 0, 1024, 1024, 1024));
        assertThat(d.proxy().timeouts()).isEqualTo(new Timeouts(Duration.ofSeconds(10), Duration.ofSeconds(10),
                Duration.ofSeconds(300), Duration.ofSeconds(300), Duration.ofSeconds(10)));
        assertThat(d.proxy().adminTokenEnv()).isNull();
        assertThat(d.ca().inStateDirectory()).isTrue();
        assertThat(d.audit().isStdout()).isTrue();
        assertThat(d.mode()).isEqualTo(Mode.ENFORCE);
        assertThat(d.upstream().systemTrust()).isTrue();
        assertThat(d.network().deny()).isEqualTo(DefaultDeny.NETWORKS);
        assertThat(d.rules()).isEmpty();
        assertThat(d.source()).isNull();
    }

    @Test
    void readsTheAddedKeys(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, """
                proxy:
                  listen: "[::1]:0"
                  admin: localhost:9902
                  limits: {max_connections: 10, max_tunnels: 20, max_header_bytes: 4096,
                           max_initial_line_bytes: 1024, max_body_bytes: 1048576,
                           max_connections_per_client: 4, max_tunnels_per_client: 3,
                           max_exchanges_per_client: 7}
                  timeouts: {connect: 250ms, tls: 5s, response_headers: 10m, idle: 1h, shutdown_grace: 0s}
                  admin_token: {file: secrets/admin.token}
                  http2: true
                  transparent: 172.30.0.1:3129
                  dns: 172.30.0.1:5353
                  metrics_identities: [ci, release]
                upstream: {trust: [system, corp.pem]}
                network: {deny: [default, "192.31.196.0/24"], literal_addresses: capture}
                rules:
                  - {name: r, hosts: [a.example], ports: [443, 8443]}
                  - {name: npm, hosts: [registry.example.com], allow_encoded_slash: true}
                secrets:
                  - name: API_KEY
                    from: file:keys/api
                    hosts: ["*.api.example"]
                    headers: [X-Api-Key, Authorization]
                    placeholder: SALLYPORT_PLACEHOLDER_API_KEY
                    require: true
                    lazy: true
                    allow_cleartext: true
                    elsewhere_on_own_hosts: refuse
                  - {name: OTHER, from: env:OTHER, hosts: [b.example], headers: [Authorization]}
                """);
        Policy p = PolicyLoader.load(file);
        assertThat(p.proxy().listen()).isEqualTo(new HostPort("::1", 0));
        assertThat(p.proxy().listen().toString()).isEqualTo("[::1]:0");
        assertThat(p.proxy().admin()).isEqualTo(new HostPort("localhost", 9902));
        assertThat(p.proxy().limits()).isEqualTo(new Limits(10, 20, 4096, 1024, 1_048_576, 4, 3, 7));
        assertThat(p.proxy().timeouts()).isEqualTo(new Timeouts(Duration.ofMillis(250), Duration.ofSeconds(5),
                Duration.ofMinutes(10), Duration.ofHours(1), Duration.ZERO));
        assertThat(p.proxy().adminTokenFile()).isEqualTo(dir.toAbsolutePath().resolve("secrets/admin.token"));
        assertThat(p.proxy().http2()).isTrue();
        assertThat(ProxySettings.DEFAULTS.http2()).isTrue();
        assertThat(p.proxy().transparent()).isEqualTo(new HostPort("172.30.0.1", 3129));
        assertThat(p.proxy().dns()).isEqualTo(new HostPort("172.30.0.1", 5353));
        assertThat(ProxySettings.DEFAULTS.transparent()).as("no transparent listener unless asked").isNull();
        assertThat(ProxySettings.DEFAULTS.dns()).isNull();
        assertThat(p.proxy().metricsIdentities()).containsExactly("ci", "release");
        assertThat(ProxySettings.DEFAULTS.metricsIdentities()).isEmpty();
        assertThat(p.upstream().trustFiles()).containsExactly(dir.toAbsolutePath().resolve("corp.pem"));
        assertThat(p.network().deny()).hasSize(DefaultDeny.NETWORKS.size() + 1);
        assertThat(p.network().literalAddresses()).isEqualTo(LiteralAddresses.CAPTURE);
        assertThat(NetworkSettings.DEFAULTS.literalAddresses()).as("no route unless asked")
                .isEqualTo(LiteralAddresses.NO_ROUTE);
        assertThat(p.rules().getFirst().ports()).isEqualTo(Set.of(443, 8443));
        assertThat(p.rules().getFirst().allowEncodedSlash()).as("default").isFalse();
        assertThat(p.rules().get(1).allowEncodedSlash()).isTrue();
        SecretSpec s = p.secrets().getFirst();
        assertThat(s.from()).isEqualTo(new SecretSource.File(dir.toAbsolutePath().resolve("keys/api")));
        assertThat(s.placeholder()).isEqualTo("SALLYPORT_PLACEHOLDER_API_KEY");
        assertThat(s.require()).isTrue();
        assertThat(s.lazy()).isTrue();
        assertThat(s.allowCleartext()).isTrue();
        assertThat(s.elsewhere()).isEqualTo(SecretSpec.Elsewhere.REFUSE);
        assertThat(p.secrets().get(1).elsewhere()).as("default").isEqualTo(SecretSpec.Elsewhere.FORWARD);
        assertThat(s.toString()).doesNotContain("SALLYPORT_PLACEHOLDER_API_KEY");
    }

    @Test
    void recordsAreImmutable() throws Exception {
        Policy p = PolicyLoader.parse(CONTRACT_EXAMPLE, "p.yaml");
        assertThatThrownBy(() -> p.rules().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> p.rules().getFirst().methods().add("PUT"))
                .isInstanceOf(UnsupportedOperationException.class);
        List<Rule> mutable = new java.util.ArrayList<>(p.rules());
        Policy copy = new Policy(p.proxy(), p.ca(), p.audit(), p.mode(), p.upstream(), p.network(), mutable,
                p.secrets(), null);
        mutable.clear();
        assertThat(copy.rules()).hasSize(4);
    }

    @Test
    void aMissingFileIsOneProblem(@TempDir Path dir) {
        PolicyException e = catchThrowableOfType(PolicyException.class,
                () -> PolicyLoader.load(dir.resolve("nope.yaml")));
        assertThat(e.problems()).hasSize(1);
        assertThat(e.getMessage()).contains("nope.yaml").contains("cannot be read").contains("(expected: ");
    }

    @Test
    void yamlTagsInstantiateNothing() {
        PolicyException e = problems("mode: !!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[]]]");
        assertThat(e.problems()).hasSize(1);
        assertThat(e.problems().getFirst().line()).isEqualTo(1);
        assertThat(e.problems().getFirst().message()).containsIgnoringCase("tag");
    }

    @Test
    void aliasBombsAreRefused() {
        StringBuilder sb = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for (char c = 'b'; c <= 'k'; c++) {
            char prev = (char) (c - 1);
            sb.append(c).append(": &").append(c).append(" [*").append(prev).append(", *").append(prev).append(", *")
                    .append(prev).append(", *").append(prev).append("]\n");
        }
        PolicyException e = problems(sb.toString());
        assertThat(e.problems()).isNotEmpty();
    }

    @Test
    void stateDirectory() {
        assertThat(StateDirectory.resolve(Map.of("SALLYPORT_HOME", "/srv/sp"), "/home/u")).isEqualTo(Path.of("/srv/sp"));
        assertThat(StateDirectory.resolve(Map.of(), "/home/u")).isEqualTo(Path.of("/home/u/.local/share/sallyport"));
        assertThat(StateDirectory.resolve(Map.of("SALLYPORT_HOME", ""), "/home/u"))
                .isEqualTo(Path.of("/home/u/.local/share/sallyport"));
        assertThat(StateDirectory.resolve()).isAbsolute();
    }
}
