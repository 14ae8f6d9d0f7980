package dev.sallyport.sandbox;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.AuditSettings;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Identities;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.SandboxSettings;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.identity.ReportedRefusal;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.sandbox.internal.CaptureRules;
import dev.sallyport.sandbox.internal.GitRemotes;
import dev.sallyport.sandbox.net.SandboxNetwork;
import dev.sallyport.sandbox.vm.GatewayRelay;
import dev.sallyport.sandbox.vm.ProxyHook;
import dev.sallyport.sandbox.vm.VmSandbox;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The steps of one {@link SandboxRun}, in order: a line when the workspace's git remotes use SSH, the placeholders
 * (from a state directory's key, or the run's own), the run's own proxy and its CA when it has one, then the
 * backend. Every resource is closed on the way out, also when a step fails.
 */
final class RunSteps {
    private static final String CA_NAME = "Sallyport run CA";
    private static final HostPort ANY_LOOPBACK_PORT = new HostPort("127.0.0.1", 0);

    private final SandboxRun run;
    private final PrintStream out;
    private final PrintStream err;

    RunSteps(SandboxRun run, PrintStream out, PrintStream err) {
        this.run = run;
        this.out = out;
        this.err = err;
    }

    int run() throws Exception {
        StartTrace.mark("run steps");
        GitRemotes.sshNotice(run.workdir()).ifPresent(line -> err.println("sallyport: " + line));
        return switch (new Plan(run.proxy(), run.backend())) {
            case Plan(SandboxRun.ProxyMode.Running proxy, SandboxRun.Backend.Process process) -> {
                Map<String, String> placeholders = chosen(Placeholders.forPolicy(run.policy(), proxy.stateDirectory()));
                yield ProcessSandbox.run(spec(process, proxy.address(), proxy.caPem(), placeholders), err);
            }
            case Plan(SandboxRun.ProxyMode.Attached proxy, SandboxRun.Backend.Process process) -> attached(proxy, process);
            case Plan(SandboxRun.ProxyMode.Attached proxy, SandboxRun.Backend.Nerdctl vm) -> attachedVm(proxy, vm);
            case Plan(SandboxRun.ProxyMode.Own own, SandboxRun.Backend backend) -> withOwnProxy(own, backend);
            case Plan(SandboxRun.ProxyMode.Running _, SandboxRun.Backend.Nerdctl _) ->
                    throw new IllegalStateException("an unregistered running proxy with the nerdctl backend (SandboxRun "
                            + "refuses it)");
        };
    }

    /** The two choices of a run that decide its steps. */
    private record Plan(SandboxRun.ProxyMode proxy, SandboxRun.Backend backend) {
    }

    /**
     * Registered with a shared proxy for the run: its placeholders, its token on every connection of the relay, and
     * (unless {@code --no-capture}) its DNS and captured connections relayed to the proxy's main listener as its own.
     */
    private int attached(SandboxRun.ProxyMode.Attached proxy, SandboxRun.Backend.Process process) throws Exception {
        try (SandboxLease lease = register(proxy)) {
            StartTrace.mark("registered");
            SandboxSpec.Builder spec = builder(process, proxy.address(), proxy.caPem(), chosen(lease.placeholders()));
            spec.identityToken(lease.token());
            if (process.capture()) {
                // the relay carries DNS and captured connections to the proxy's main listener behind the token
                spec.capture(new SandboxSpec.Capture(proxy.address(), proxy.address(),
                        run.policy().network().literalAddresses()));
            }
            return ProcessSandbox.run(spec.build(), err);
        }
    }

    /** Registers the run's sandbox (its policy file's rules) and checks the secrets it names are among its own. */
    private SandboxLease register(SandboxRun.ProxyMode.Attached proxy) throws Exception {
        Path source = run.policy().source();
        String rules = source == null ? "" : Files.readString(source);
        SandboxLease lease = SandboxLease.register(proxy, rules, err);
        for (String name : run.secrets()) {
            if (!lease.placeholders().containsKey(name)) {
                lease.close();
                throw new SandboxException("--secret: '" + name + "' is not a secret the proxy gives sandbox "
                        + proxy.identity() + " (expected: one of " + String.join(", ", lease.placeholders().keySet())
                        + ")");
            }
        }
        return lease;
    }

    /**
     * A VM sandbox registered with a shared proxy: the relay on its bridge's gateway presents the registration's token
     * on every connection from the guest's address; what the host refuses for it (a spoofed source on the bridge, a
     * stranger at the relay) is reported to the proxy's audit log. Capture too: the relay carries the guest's DNS and
     * the TCP the table DNATs to its transparent port, each decided as this sandbox's. A dry run registers nothing (its plan has no placeholders).
     */
    private int attachedVm(SandboxRun.ProxyMode.Attached proxy, SandboxRun.Backend.Nerdctl vm) throws Exception {
        err.printf("sallyport: sandbox %s attached to the proxy at %s:%d; the gateway relays the guest's proxy "
                + (vm.capture() ? "connections, DNS and captured TCP to it%n"
                        : "connections to it; capture is off (--no-capture): no DNS, no captured TCP%n"),
                proxy.identity(), proxy.address().getHostString(), proxy.address().getPort());
        err.flush();
        if (vm.dryRun()) {
            return VmSandbox.run(workload(vm, Map.of()), proxy.caPem(), out, relayHook(proxy, null));
        }
        try (SandboxLease lease = register(proxy)) {
            return VmSandbox.run(workload(vm, chosen(lease.placeholders())), proxy.caPem(), out,
                    relayHook(proxy, lease));
        }
    }

    private VmSandbox.Workload workload(SandboxRun.Backend.Nerdctl vm, Map<String, String> placeholders) {
        SandboxSettings settings = run.policy().sandbox();
        VmSandbox.Guard guard = new VmSandbox.Guard(!vm.gitReadOnly()
                && settings.git() == SandboxSettings.GitAccess.WRITABLE, settings.hold(),
                StateDirectory.resolve().resolve(Held.FOLDER));
        return new VmSandbox.Workload(vm.runtime(), vm.image(), run.command(), run.workdir(), placeholders,
                vm.dryRun(), vm.nerdctl(), run.policy().network().literalAddresses(), vm.capture(), guard);
    }

    /** The gateway relay to the shared proxy with {@code lease}'s token (null: a dry run, which starts nothing). */
    private static ProxyHook relayHook(SandboxRun.ProxyMode.Attached proxy, /* @Nullable */ SandboxLease lease) {
        return new ProxyHook() {
            @Override
            public AutoCloseable start(InetSocketAddress listen) {
                throw new IllegalStateException("the gateway relay starts for a network (start(SandboxNetwork))");
            }

            @Override
            public AutoCloseable start(SandboxNetwork network) throws Exception {
                if (lease == null) {
                    throw new IllegalStateException("a dry run starts no relay");
                }
                return GatewayRelay.start(network, proxy.address(), lease.token(),
                        stranger -> lease.refused(SandboxLease.WRONG_RELAY_PEER, stranger));
            }

            @Override
            public void spoofed(String source) {
                if (lease != null) {
                    lease.refused(SandboxLease.SPOOFED_SOURCE, source);
                }
            }

            @Override
            public String plan(SandboxNetwork network) {
                return "register sandbox " + proxy.identity() + " with the proxy's admin listener at "
                        + proxy.admin().getHostString() + ":" + proxy.admin().getPort() + ", then start the relay on "
                        + network.gateway() + ":" + network.proxyPort() + " to the proxy at "
                        + proxy.address().getHostString() + ":" + proxy.address().getPort()
                        + " (taking only " + network.guest() + ", presenting the registration's token)"
                        + (network.capture() ? "; captured TCP on " + network.gateway() + ":"
                        + network.transparentPort() + " (with its original destination) and DNS on " + network.gateway()
                        + ":" + network.dnsPort() + " go the same way" : "; no capture");
            }
        };
    }

    private int withOwnProxy(SandboxRun.ProxyMode.Own own, SandboxRun.Backend backend) throws Exception {
        Placeholders keys = own.placeholderKeys().map(Placeholders::deferred).orElseGet(Placeholders::ephemeral);
        CertificateAuthority ca = CertificateAuthority.ephemeral(CA_NAME);
        byte[] caPem = CaExport.pem(ca.certificate(), false);
        Policy given = onlyChosenUsable(run.policy());
        Policy policy = own.audit().map(audit -> withAudit(given, audit)).orElse(given);
        Map<String, String> placeholders = chosen(keys.all(given));
        return switch (backend) {
            case SandboxRun.Backend.Process process -> {
                ProxyOptions options = proxyOptions(policy, ca, keys, ANY_LOOPBACK_PORT);
                if (process.capture()) {
                    // AAAA answers only where the sandbox's namespace captures the IPv6 prefix too.
                    options = options.withCapture(new ProxyOptions.Capture(ANY_LOOPBACK_PORT, ANY_LOOPBACK_PORT,
                            CaptureRules.ipv6()));
                }
                try (SallyportProxy proxy = SallyportProxy.start(options)) {
                    err.printf("sallyport: sandbox proxy on 127.0.0.1:%d, audit log %s%n", proxy.address().getPort(),
                            policy.audit().path());
                    err.flush();
                    SandboxSpec.Builder spec = builder(process, proxy.address(), caPem, placeholders);
                    if (process.capture()) {
                        spec.capture(new SandboxSpec.Capture(proxy.dnsAddress().orElseThrow(),
                                proxy.transparentAddress().orElseThrow(), policy.network().literalAddresses()));
                    }
                    yield ProcessSandbox.run(spec.build(), err);
                }
            }
            case SandboxRun.Backend.Nerdctl vm -> {
                if (!vm.capture()) {
                    err.println("sallyport: capture is off (--no-capture): the guest reaches only the proxy port, no "
                            + "DNS and no captured TCP");
                    err.flush();
                }
                yield VmSandbox.run(workload(vm, placeholders), caPem, out, capturingVmProxy(policy, ca, keys));
            }
        };
    }

    /**
     * The VM run's own proxy, started once the bridge exists, capturing unless the network does not
     * ({@link VmSandbox#proxyOn}); a spoofed source
     * the host table dropped is audited there too (the guest reaches its own proxy as {@code anonymous}).
     */
    private static ProxyHook capturingVmProxy(Policy policy, CertificateAuthority ca, Placeholders keys) {
        return new ProxyHook() {
            private volatile /* @Nullable */ SallyportProxy started;

            @Override
            public AutoCloseable start(InetSocketAddress listen) throws Exception {
                started = SallyportProxy.start(proxyOptions(policy, ca, keys,
                        new HostPort(listen.getAddress().getHostAddress(), listen.getPort())));
                return started;
            }

            @Override
            public AutoCloseable start(SandboxNetwork network) throws Exception {
                started = SallyportProxy.start(VmSandbox.proxyOn(network, proxyOptions(policy, ca, keys,
                        ANY_LOOPBACK_PORT)));
                return started;
            }

            @Override
            public void spoofed(String source) {
                SallyportProxy proxy = started;
                if (proxy != null) {
                    proxy.refused(new ReportedRefusal(Identities.ANONYMOUS, source, ReportedRefusal.SPOOFED_SOURCE));
                }
            }
        };
    }

    private static ProxyOptions proxyOptions(Policy policy, CertificateAuthority ca, Placeholders keys,
                                             HostPort listen) {
        return ProxyOptions.of(policy).withCa(ca).withListen(listen).withAdmin(ANY_LOOPBACK_PORT)
                .withPlaceholders(keys);
    }

    private SandboxSpec spec(SandboxRun.Backend.Process process, InetSocketAddress proxy, byte[] caPem,
                             Map<String, String> placeholders) {
        return builder(process, proxy, caPem, placeholders).build();
    }

    private SandboxSpec.Builder builder(SandboxRun.Backend.Process process, InetSocketAddress proxy, byte[] caPem,
                                        Map<String, String> placeholders) {
        SandboxSpec.Builder builder = SandboxSpec.builder(run.command(), run.workdir(), proxy, caPem);
        process.options().accept(builder);
        placeholders.forEach(builder::placeholder);
        return builder;
    }

    /** The placeholders of the run's secrets: all of them, or those it names, in its order. */
    private Map<String, String> chosen(Map<String, String> all) {
        if (run.secrets().isEmpty()) {
            return all;
        }
        Map<String, String> chosen = new LinkedHashMap<>();
        run.secrets().forEach(name -> chosen.put(name, all.get(name)));
        return chosen;
    }

    /**
     * The policy with a placeholder of this run only (random, never shown) for each secret the run does not give the
     * command: the proxy still holds it (a {@code require: true} secret keeps refusing requests without it, and its
     * value is scrubbed), but a placeholder an earlier run gave out for it does not work in this one.
     */
    private Policy onlyChosenUsable(Policy p) {
        if (run.secrets().isEmpty()) {
            return p;
        }
        Placeholders runOnly = Placeholders.ephemeral();
        List<SecretSpec> secrets = p.secrets().stream()
                .map(s -> run.secrets().contains(s.name()) ? s : s.withPlaceholder(runOnly.derive(s.name())))
                .toList();
        return new Policy(p.proxy(), p.ca(), p.audit(), p.mode(), p.upstream(), p.network(), p.rules(), secrets,
                p.source(), p.registries(), p.git(), p.sandbox());
    }

    private static Policy withAudit(Policy p, Path audit) {
        return new Policy(p.proxy(), p.ca(), new AuditSettings(audit.toString()), p.mode(), p.upstream(), p.network(),
                p.rules(), p.secrets(), p.source(), p.registries(), p.git(), p.sandbox());
    }
}
