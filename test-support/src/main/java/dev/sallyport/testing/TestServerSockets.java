package dev.sallyport.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Collection;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

/** What every TLS test server here needs: a listening socket on 127.0.0.1 that presents a chain, and a clean stop. */
public final class TestServerSockets {

    private TestServerSockets() {}

    /** A JDK TLS server socket on 127.0.0.1 (ephemeral port), TLS 1.3 and 1.2, presenting {@code chain}. */
    public static SSLServerSocket tls(PrivateKey key, X509Certificate[] chain) {
        try {
            SSLServerSocket socket = (SSLServerSocket) serverContext(key, chain).getServerSocketFactory()
                    .createServerSocket(0, 50, InetAddress.getLoopbackAddress());
            socket.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            return socket;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A server-side JDK TLS context that presents {@code key} and {@code chain} (for HttpsServer and the like). */
    public static SSLContext serverContext(PrivateKey key, X509Certificate[] chain) {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            char[] password = "test".toCharArray();
            store.setKeyEntry("server", key, password, chain);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot build the test server's TLS context: " + e, e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops accepting, closes open connections and waits (bounded) for the accept thread to end. */
    public static void close(ServerSocket server, Collection<Socket> open, Thread acceptor) {
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket s : open) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
