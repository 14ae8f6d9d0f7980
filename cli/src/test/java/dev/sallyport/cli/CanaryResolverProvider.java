package dev.sallyport.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver;
import java.net.spi.InetAddressResolverProvider;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The CLI JVM's resolver in tests that give it {@code -Dsallyport.test.canaryResolver=PORT}: the names of the hosts
 * file that {@code -Dsallyport.test.hostsFile} names (the JDK's own {@code jdk.net.hosts.file} would bypass this
 * provider), and for any other name a real DNS query over UDP to {@code 127.0.0.1:PORT}, a {@link CanaryResolver} of
 * the test standing in for the machine's resolver (the name then stays unknown): every name the proxy looks up for
 * real reaches it, and nothing is ever asked of a resolver off the machine. Without the property it is the JDK's
 * resolver, unchanged.
 */
public final class CanaryResolverProvider extends InetAddressResolverProvider {
    static final String PROPERTY = "sallyport.test.canaryResolver";
    static final String HOSTS = "sallyport.test.hostsFile";

    @Override
    public InetAddressResolver get(Configuration configuration) {
        InetAddressResolver builtin = configuration.builtinResolver();
        String port = System.getProperty(PROPERTY);
        if (port == null) {
            return builtin;
        }
        InetSocketAddress canary = new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(port));
        Map<String, InetAddress> hosts = hosts(System.getProperty(HOSTS));
        return new InetAddressResolver() {
            @Override
            public Stream<InetAddress> lookupByName(String host, LookupPolicy policy) throws UnknownHostException {
                InetAddress known = hosts.get(host.toLowerCase(Locale.ROOT));
                if (known != null) {
                    return Stream.of(known);
                }
                if (host.equalsIgnoreCase("localhost")) {
                    return Stream.of(InetAddress.getLoopbackAddress());
                }
                ask(canary, host);
                throw new UnknownHostException(host + ": not in the test's hosts file (asked the canary resolver)");
            }

            @Override
            public String lookupByAddress(byte[] addr) throws UnknownHostException {
                throw new UnknownHostException("no reverse lookups in this test");
            }
        };
    }

    private static Map<String, InetAddress> hosts(/* @Nullable */ String file) {
        Map<String, InetAddress> hosts = new HashMap<>();
        if (file == null) {
            return hosts;
        }
        try {
            for (String line : Files.readAllLines(Path.of(file))) {
                String[] words = line.trim().split("\\s+");
                for (int i = 1; i < words.length; i++) {
                    hosts.put(words[i].toLowerCase(Locale.ROOT), InetAddress.ofLiteral(words[0]));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return hosts;
    }

    /** One A query for {@code host} to the canary, waiting up to a second for its answer. */
    private static void ask(InetSocketAddress canary, String host) {
        ByteBuffer query = ByteBuffer.allocate(512).putShort((short) 0x5ca1).putShort((short) 0x0100)
                .putShort((short) 1).putShort((short) 0).putShort((short) 0).putShort((short) 0);
        for (String label : host.split("\\.")) {
            byte[] bytes = label.getBytes(StandardCharsets.US_ASCII);
            query.put((byte) bytes.length).put(bytes);
        }
        query.put((byte) 0).putShort((short) 1).putShort((short) 1);
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.setSoTimeout(1_000);
            socket.send(new DatagramPacket(query.array(), query.position(), canary));
            socket.receive(new DatagramPacket(new byte[512], 512));
        } catch (SocketTimeoutException e) {
            // the canary answers; a lost answer changes nothing: the name stays unknown
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String name() {
        return "sallyport-test-canary";
    }
}
