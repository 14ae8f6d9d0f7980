package dev.sallyport.proxy;

import dev.sallyport.proxy.internal.Transports;
import io.netty.handler.ssl.SslContextBuilder;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.Signature;
import javax.net.ssl.TrustManagerFactory;

/**
 * Initialises, on a background thread, what every proxy start needs and what takes longest when cold: BoringSSL
 * (native library, cipher tables, a first context), the JDK's default trust store, and the JDK's EC code that
 * loading the CA runs. The command line calls it before parsing its arguments, so this work overlaps the parse
 * and the policy load on a second core; it holds nothing afterwards and is harmless when no start follows.
 */
public final class Prewarm {

    private Prewarm() {}

    public static void start() {
        Thread.ofPlatform().daemon().name("sallyport-prewarm").start(() -> {
            try {
                SslContextBuilder.forClient().sslProvider(Transports.sslProvider()).build();
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm()).init((KeyStore) null);
                KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
                generator.initialize(256);
                KeyPair pair = generator.generateKeyPair();
                Signature signer = Signature.getInstance("SHA256withECDSA");
                signer.initSign(pair.getPrivate());
                signer.update(new byte[32]);
                byte[] signature = signer.sign();
                Signature verifier = Signature.getInstance("SHA256withECDSA");
                verifier.initVerify(pair.getPublic());
                verifier.update(new byte[32]);
                verifier.verify(signature);
            } catch (Exception | LinkageError e) {
                // only a head start: the real start does the same work and reports what fails
            }
        });
    }
}
