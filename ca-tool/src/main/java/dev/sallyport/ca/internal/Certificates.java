package dev.sallyport.ca.internal;

import dev.sallyport.ca.KeyType;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Key generation and CA certificate building (BouncyCastle builders, JDK providers). */
public final class Certificates {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Certificates() {
    }

    /** A fresh key pair of the given type. */
    public static KeyPair generate(KeyType type) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance(type.algorithm());
            if (type == KeyType.EC_P256) {
                generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            } else {
                generator.initialize(type.bits(), RANDOM);
            }
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate a " + type.id() + " key: " + Pem.oneLine(e), e);
        }
    }

    /** The key type of a key, or {@code null} when it is not one Sallyport creates (loading still works). */
    public static /* @Nullable */ KeyType typeOf(PublicKey key) {
        if (key instanceof java.security.interfaces.ECPublicKey ec) {
            return ec.getParams().getCurve().getField().getFieldSize() == 256 ? KeyType.EC_P256 : null;
        }
        if (key instanceof java.security.interfaces.RSAPublicKey rsa) {
            return switch (rsa.getModulus().bitLength()) {
                case 2048 -> KeyType.RSA_2048;
                case 4096 -> KeyType.RSA_4096;
                default -> null;
            };
        }
        return null;
    }

    /** A random positive serial number of at most 128 bits (never zero). */
    public static BigInteger serial() {
        byte[] bytes = new byte[16];
        BigInteger serial;
        do {
            RANDOM.nextBytes(bytes);
            bytes[0] &= 0x7f;
            serial = new BigInteger(1, bytes);
        } while (serial.signum() == 0);
        return serial;
    }

    /** The signature algorithm a key signs certificates with: SHA-256 with ECDSA or RSA (PKCS#1 v1.5). */
    public static String signatureAlgorithm(PrivateKey key) {
        return switch (key.getAlgorithm()) {
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            default -> throw new IllegalArgumentException(
                    "key algorithm " + key.getAlgorithm() + " is not supported (expected: EC or RSA)");
        };
    }

    /** An X.500 name with just a common name. */
    public static X500Name commonName(String cn) {
        return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, cn).build();
    }

    /**
     * A self-signed CA certificate: basicConstraints CA:true pathLen 0 (critical), keyUsage keyCertSign and
     * cRLSign (critical), subject and authority key identifiers, a random 128-bit serial.
     */
    public static X509Certificate selfSignedCa(KeyPair keys, String name, Instant notBefore, Instant notAfter) {
        try {
            X500Name subject = commonName(name);
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(),
                    Date.from(notBefore), Date.from(notAfter), subject, keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            ext.createSubjectKeyIdentifier(keys.getPublic()))
                    .addExtension(Extension.authorityKeyIdentifier, false,
                            ext.createAuthorityKeyIdentifier(keys.getPublic()));
            return sign(builder, keys.getPrivate());
        } catch (GeneralSecurityException | CertIOException e) {
            throw new IllegalStateException("cannot build the CA certificate: " + Pem.oneLine(e), e);
        }
    }

    /** Signs a certificate builder with {@code signer} and converts the result to a JDK certificate. */
    public static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
            throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder(signatureAlgorithm(signer)).build(signer)));
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException("cannot sign: " + Pem.oneLine(e), e);
        }
    }

    /** Whether {@code key} is the private half of {@code pub}: signs a probe with one and verifies with the other. */
    public static boolean matches(PrivateKey key, PublicKey pub) {
        if (!key.getAlgorithm().equals(pub.getAlgorithm())) {
            return false;
        }
        try {
            byte[] probe = new byte[32];
            RANDOM.nextBytes(probe);
            String algorithm = signatureAlgorithm(key);
            Signature s = Signature.getInstance(algorithm);
            s.initSign(key);
            s.update(probe);
            byte[] signature = s.sign();
            Signature v = Signature.getInstance(algorithm);
            v.initVerify(pub);
            v.update(probe);
            return v.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }
}
