package dev.sallyport.cli;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sallyport proxy [--config FILE]}: runs the egress proxy in the foreground until SIGINT or SIGTERM, then
 * drains open exchanges for up to {@code proxy.timeouts.shutdown_grace}. SIGHUP and edits of the file reload the
 * policy (a broken file keeps the old policy).
 */
@Command(name = "proxy", mixinStandardHelpOptions = true,
        description = "Run the egress proxy in the foreground (built-in deny-all default without --config).")
public final class ProxyCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Policy file (default: the built-in policy: listen 127.0.0.1:3128, admin 127.0.0.1:9901, "
                    + "CA in the state directory, audit to stdout, deny everything).")
    Path config;

    @Override
    public Integer call() throws Exception {
        Policy policy = FollowedPolicy.load("--config", config);
        SallyportProxy proxy;
        try {
            proxy = SallyportProxy.start(ProxyOptions.of(policy));
        } catch (java.net.BindException e) {
            var p = policy.proxy();
            String addresses = java.util.stream.Stream.of(p.listen(), p.admin(), p.transparent(), p.dns())
                    .filter(java.util.Objects::nonNull).map(Object::toString)
                    .collect(java.util.stream.Collectors.joining(", "));
            throw new RuntimeFailure("cannot listen on one of " + addresses + ": " + e.getMessage()
                    + " (expected: free addresses; is another proxy running?)");
        }
        var err = spec.commandLine().getErr();
        err.printf("sallyport: proxy listening on %s, admin on %s, policy %s (%d rules, mode %s)%n",
                text(proxy.address()), text(proxy.adminAddress()),
                config == null ? "built-in default (deny all)" : config.toString(), policy.rules().size(),
                policy.mode().name().toLowerCase(java.util.Locale.ROOT));
        proxy.transparentAddress().ifPresent(a -> err.printf(
                "sallyport: transparent listener on %s (connections the host's nftables redirect here)%n", text(a)));
        proxy.dnsAddress().ifPresent(a -> err.printf("sallyport: dns stub on %s (udp and tcp)%n", text(a)));
        err.printf("sallyport: audit log %s, checkpoints signed with Ed25519 key %s ('sallyport audit key' exports it)%n",
                policy.audit().isStdout() ? "on stdout" : policy.audit().path(), proxy.auditKey().fingerprint());
        err.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = Thread.ofPlatform().unstarted(() -> {
            proxy.close();
            stopped.countDown();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        proxy.awaitTermination();
        stopped.await();
        return 0;
    }

    private static String text(InetSocketAddress address) {
        return address.getAddress().getHostAddress() + ":" + address.getPort();
    }
}
