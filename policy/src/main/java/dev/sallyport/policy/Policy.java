package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A whole policy file, validated and immutable. Paths in it are absolute (relative ones were resolved
 * against the file's folder). Reload swaps one Policy (through its {@link PolicyEngine}) for another.
 *
 * @param registries package registries seen as what they are ({@link Registry}): their hosts reached through them alone
 * @param git        what pushes git's smart HTTP protocol may make ({@link GitRule}), in order
 * @param sandbox    how {@code sallyport run} treats the workspace ({@link SandboxSettings}); the proxy ignores it
 * @param source nullable: the file it came from
 */
public record Policy(ProxySettings proxy, CaSettings ca, AuditSettings audit, Mode mode, UpstreamSettings upstream,
                     NetworkSettings network, List<Rule> rules, List<SecretSpec> secrets, Path source,
                     List<Registry> registries, List<GitRule> git, SandboxSettings sandbox) {

    /** A policy without a sandbox section. */
    public Policy(ProxySettings proxy, CaSettings ca, AuditSettings audit, Mode mode, UpstreamSettings upstream,
                  NetworkSettings network, List<Rule> rules, List<SecretSpec> secrets, Path source,
                  List<Registry> registries, List<GitRule> git) {
        this(proxy, ca, audit, mode, upstream, network, rules, secrets, source, registries, git,
                SandboxSettings.DEFAULTS);
    }

    /** A policy without git entries. */
    public Policy(ProxySettings proxy, CaSettings ca, AuditSettings audit, Mode mode, UpstreamSettings upstream,
                  NetworkSettings network, List<Rule> rules, List<SecretSpec> secrets, Path source,
                  List<Registry> registries) {
        this(proxy, ca, audit, mode, upstream, network, rules, secrets, source, registries, List.of());
    }

    /** A policy without registries and git entries. */
    public Policy(ProxySettings proxy, CaSettings ca, AuditSettings audit, Mode mode, UpstreamSettings upstream,
                  NetworkSettings network, List<Rule> rules, List<SecretSpec> secrets, Path source) {
        this(proxy, ca, audit, mode, upstream, network, rules, secrets, source, List.of());
    }

    public Policy {
        Objects.requireNonNull(proxy, "proxy");
        Objects.requireNonNull(ca, "ca");
        Objects.requireNonNull(audit, "audit");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(upstream, "upstream");
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(sandbox, "sandbox");
        rules = List.copyOf(rules);
        secrets = List.copyOf(secrets);
        registries = List.copyOf(registries);
        git = List.copyOf(git);
        Set<String> names = new HashSet<>();
        for (Rule r : rules) {
            if (!names.add(r.name())) {
                throw new IllegalArgumentException("rules: name '" + r.name() + "' used twice (expected: unique names)");
            }
        }
        names.clear();
        for (SecretSpec s : secrets) {
            if (!names.add(s.name())) {
                throw new IllegalArgumentException("secrets: name '" + s.name() + "' used twice (expected: unique names)");
            }
        }
    }

    /**
     * The built-in policy: listen 127.0.0.1:3128, admin 127.0.0.1:9901, CA in the state directory, audit to
     * stdout, enforce, system trust, {@code network.deny: default}, no rules (deny all).
     */
    public static Policy defaults() {
        return new Policy(ProxySettings.DEFAULTS, CaSettings.STATE_DIRECTORY, AuditSettings.STDOUT, Mode.ENFORCE,
                UpstreamSettings.SYSTEM, NetworkSettings.DEFAULTS, List.of(), List.of(), null);
    }
}
