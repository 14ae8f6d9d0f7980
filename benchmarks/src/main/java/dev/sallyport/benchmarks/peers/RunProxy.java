package dev.sallyport.benchmarks.peers;

import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import java.nio.file.Path;

/**
 * Starts Sallyport from a policy file and runs until killed: {@code RunProxy POLICY.yaml}. The peer comparison
 * uses it so it does not depend on the CLI's {@code proxy} command; both end in {@link SallyportProxy#start}.
 */
public final class RunProxy {

    private RunProxy() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("RunProxy: expected one argument (expected: POLICY.yaml)");
            System.exit(2);
        }
        SallyportProxy proxy;
        try {
            proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.load(Path.of(args[0]))));
        } catch (PolicyException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(proxy::close));
        System.err.println("RunProxy: listening on " + proxy.address() + ", admin on " + proxy.adminAddress());
        proxy.awaitTermination();
    }
}
