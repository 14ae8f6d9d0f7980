package dev.sallyport.proxy.internal;

import dev.sallyport.policy.Decision;
import dev.sallyport.proxy.events.AuditFields;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

/** Mutable builder for {@link AuditFields}; one per exchange or tunnel, used on one event loop. */
public final class AuditRecord {

    private String id;
    private String client;
    private String identity;
    private String host;
    private Integer port;
    private String ip;
    private String method;
    private String path;
    private Integer status;
    private String decision;
    private String rule;
    private String reason;
    private String tls;
    private String sni;
    private Long bytesUp;
    private Long bytesDown;
    private Long durationMs;
    private List<String> secrets;
    private List<String> forwarded;
    private String protocol;
    private String upstreamProtocol;
    private String arrival;
    private String ecosystem;
    private String packageName;
    private String version;
    private String repository;
    private List<String> refs;
    private List<String> refsRefused;

    public AuditRecord(String id, SocketAddress client) {
        this(id, clientText(client));
    }

    /** @param client the client as the audit record writes it ({@code ip:port}) */
    public AuditRecord(String id, String client) {
        this.id = id;
        this.client = client;
    }

    public static String clientText(SocketAddress address) {
        if (address instanceof InetSocketAddress inet && inet.getAddress() != null) {
            String ip = inet.getAddress().getHostAddress();
            return (ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip) + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }

    /** The client's identity ({@code anonymous} when it presented none). */
    public AuditRecord identity(String value) { identity = value; return this; }
    public AuditRecord target(String h, int p) { host = h; port = p; return this; }
    public AuditRecord ip(String value) { ip = value; return this; }
    public AuditRecord request(String m, String pathWithoutQuery) { method = m; path = pathWithoutQuery; return this; }
    public AuditRecord status(int value) { status = value; return this; }
    public AuditRecord tls(String value) { tls = value; return this; }
    public AuditRecord sni(String value) { sni = value; return this; }
    public AuditRecord protocol(String value) { protocol = value; return this; }
    public AuditRecord upstreamProtocol(String value) { upstreamProtocol = value; return this; }
    /** How the client's connection arrived: {@code explicit} or {@code transparent}. */
    public AuditRecord arrival(String value) { arrival = value; return this; }
    /** The package version a registry record is about. */
    public AuditRecord version(String eco, String pkg, String ver) {
        ecosystem = eco;
        packageName = pkg;
        version = ver;
        return this;
    }
    /**
     * What a git push asked for: the repository, the refs it updates and those refused (nullable each); a non-null
     * {@code deciding} rule ({@code git:NAME}) replaces the rule of the record.
     */
    public AuditRecord git(String deciding, String repo, List<String> updated, List<String> refused) {
        if (deciding != null) {
            rule = deciding;
        }
        repository = repo;
        refs = updated == null ? null : List.copyOf(updated);
        refsRefused = refused == null ? null : List.copyOf(refused);
        return this;
    }
    public AuditRecord bytes(long up, long down) { bytesUp = up; bytesDown = down; return this; }
    public AuditRecord duration(long ms) { durationMs = ms; return this; }
    /** Names (never values) of the secrets injected into, or refused on, this request; none: no field. */
    public AuditRecord secrets(List<String> names) { secrets = names.isEmpty() ? null : List.copyOf(names); return this; }
    /** Names of the secrets whose placeholder went upstream unchanged, outside the listed headers; none: no field. */
    public AuditRecord placeholdersForwarded(List<String> names) {
        forwarded = names.isEmpty() ? null : List.copyOf(names);
        return this;
    }

    public AuditRecord decision(Decision d) {
        decision = d.verdict().code();
        rule = d.rule();
        reason = d.reason();
        return this;
    }

    public AuditRecord denied(String why) {
        decision = "deny";
        reason = why;
        return this;
    }

    public AuditRecord reason(String why) { reason = why; return this; }

    public String client() { return client; }
    /** The verdict so far ({@code allow}, {@code deny}, ...), null before any decision. */
    public String decision() { return decision; }
    public String host() { return host; }
    public Integer port() { return port; }

    public AuditFields fields() {
        return new AuditFields(id, client, identity, host, port, ip, method, path, status, decision, rule, reason, tls,
                sni, bytesUp, bytesDown, durationMs, secrets, forwarded, protocol, upstreamProtocol, arrival, ecosystem,
                packageName, version, repository, refs, refsRefused);
    }
}
