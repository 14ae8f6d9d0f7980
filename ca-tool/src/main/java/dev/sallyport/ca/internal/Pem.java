package dev.sallyport.ca.internal;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

/** PEM reading and writing (BouncyCastle's parser and writer, JDK providers for the key objects). */
public final class Pem {
    private Pem() {
    }

    /** One certificate as PEM text. */
    public static String certificate(X509Certificate certificate) {
        return write(certificate);
    }

    /** A private key as unencrypted PKCS#8 PEM ({@code -----BEGIN PRIVATE KEY-----}). */
    public static String privateKey(PrivateKey key) {
        try {
            return write(new JcaPKCS8Generator(key, null).generate());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String write(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(object);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /**
     * Every certificate in PEM text, in order; other PEM objects and text between them are skipped.
     *
     * @throws IllegalArgumentException with a short reason if a certificate block is corrupt
     */
    public static List<X509Certificate> readCertificates(String text) {
        List<X509Certificate> out = new ArrayList<>();
        JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
                if (o instanceof X509CertificateHolder holder) {
                    out.add(converter.getCertificate(holder));
                }
            }
        } catch (IOException | CertificateException | RuntimeException e) {
            throw new IllegalArgumentException("corrupt PEM data (" + oneLine(e) + ")", e);
        }
        return out;
    }

    /**
     * The first private key in PEM text: PKCS#8, or the traditional PKCS#1 (RSA) and SEC1 (EC) forms.
     *
     * @throws IllegalArgumentException with a short reason if there is none, or it is encrypted or corrupt
     */
    public static PrivateKey readPrivateKey(String text) {
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
                switch (o) {
                    case PrivateKeyInfo info -> {
                        return converter.getPrivateKey(info);
                    }
                    case PEMKeyPair pair -> {
                        return converter.getPrivateKey(pair.getPrivateKeyInfo());
                    }
                    case PEMEncryptedKeyPair ignored -> throw encrypted();
                    case PKCS8EncryptedPrivateKeyInfo ignored -> throw encrypted();
                    default -> {
                        // not a key: keep looking
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException iae && iae.getMessage() != null
                    && iae.getMessage().startsWith("encrypted")) {
                throw iae;
            }
            throw new IllegalArgumentException("corrupt PEM data (" + oneLine(e) + ")", e);
        }
        throw new IllegalArgumentException("no private key found");
    }

    private static IllegalArgumentException encrypted() {
        return new IllegalArgumentException("encrypted private keys are not supported");
    }

    /** An exception's message squeezed onto one line. */
    public static String oneLine(Throwable e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return m.replaceAll("\\s+", " ").trim();
    }
}
