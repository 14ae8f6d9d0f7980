package dev.sallyport.benchmarks.soak;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The soak's proxy, alone in its own JVM so that what the soak measures is the proxy's: {@code SoakProxy
 * POLICY WORKDIR}. Every {@code *.soak.test} name resolves to 127.0.0.1 (so new host names cost a mint, not a
 * DNS server). Writes its CA to {@code WORKDIR/ca.pem} and its port to {@code WORKDIR/proxy.port}; then, for
 * each line {@code sample} on standard input, collects garbage and prints one line {@code sample heap=B
 * direct=B netty=B} (heap used after a full collection, the JDK's direct buffers, Netty's direct memory);
 * exits when standard input closes.
 */
public final class SoakProxy {

    private SoakProxy() {}

    public static void main(String[] args) throws Exception {
        Path policyFile = Path.of(args[0]);
        Path work = Path.of(args[1]);
        Policy policy = PolicyLoader.load(policyFile);
        CertificateAuthority ca = CertificateAuthority.ephemeral("Sallyport Soak CA");
        Files.write(work.resolve("ca.pem"), CaExport.pem(ca, false));
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(policy).withCa(ca)
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(host -> host.endsWith(".soak.test")
                        ? CompletableFuture.completedFuture(List.of(loopback))
                        : CompletableFuture.failedFuture(new IllegalStateException("cannot resolve " + host))))) {
            Path port = work.resolve("proxy.port");
            Files.writeString(work.resolve("proxy.port.tmp"), String.valueOf(proxy.address().getPort()));
            Files.move(work.resolve("proxy.port.tmp"), port);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                if (line.equals("sample")) {
                    System.out.println(sample());
                    System.out.flush();
                }
            }
        }
    }

    private static String sample() {
        System.gc();
        // the leak detector reports a collected, unreleased buffer when a new one is tracked: track some
        for (int i = 0; i < 64; i++) {
            ByteBuf probe = PooledByteBufAllocator.DEFAULT.directBuffer(64);
            probe.release();
        }
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(p -> p.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
        return "sample heap=" + heap + " direct=" + direct + " netty=" + PlatformDependent.usedDirectMemory();
    }
}
