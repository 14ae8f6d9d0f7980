package dev.sallyport.ca.internal;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.BERTags;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.asn1.x509.Time;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;

/**
 * Signs server certificates for one leaf public key with one CA. Everything that does not depend on the host
 * (issuer name, key identifiers) is computed once. Thread-safe: each call builds its own signer.
 */
public final class LeafSigner {
    /** Longest common name X.520 allows; longer host names get no CN (the SAN carries the name). */
    static final int MAX_CN = 64;

    private final X500Name issuer;
    private final PrivateKey caKey;
    private final PublicKey leafKey;
    private final SubjectKeyIdentifier subjectKeyId;
    private final AuthorityKeyIdentifier authorityKeyId;
    private final boolean rsaLeaf;

    private static final DateTimeFormatter UTC_TIME =
            DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter GENERALIZED_TIME =
            DateTimeFormatter.ofPattern("yyyyMMddHHmmss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

    public LeafSigner(X509Certificate caCert, PrivateKey caKey, PublicKey leafKey) {
        try {
            this.issuer = new JcaX509CertificateHolder(caCert).getSubject();
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            this.subjectKeyId = ext.createSubjectKeyIdentifier(leafKey);
            byte[] caSki = caCert.getExtensionValue(Extension.subjectKeyIdentifier.getId());
            this.authorityKeyId = caSki != null
                    ? new AuthorityKeyIdentifier(SubjectKeyIdentifier.getInstance(
                            DEROctetString.getInstance(caSki).getOctets()).getKeyIdentifier())
                    : ext.createAuthorityKeyIdentifier(caCert.getPublicKey());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot prepare leaf signing: " + Pem.oneLine(e), e);
        }
        this.caKey = caKey;
        this.leafKey = leafKey;
        this.rsaLeaf = "RSA".equals(leafKey.getAlgorithm());
    }

    /**
     * RFC 5280's encoding of a validity time, whole seconds in UTC: UTCTime through 2049, GeneralizedTime from 2050.
     * Encoded here rather than by BouncyCastle's {@code Time(Date)}, which builds and runs several
     * {@code SimpleDateFormat}s for each time: a noticeable share of a mint.
     */
    static Time time(Instant at) throws CertIOException {
        Instant whole = at.truncatedTo(ChronoUnit.SECONDS);
        int year = whole.atZone(ZoneOffset.UTC).getYear();
        boolean utcTime = year >= 1950 && year < 2050;
        byte[] text = (utcTime ? UTC_TIME : GENERALIZED_TIME).format(whole).getBytes(StandardCharsets.US_ASCII);
        byte[] der = new byte[text.length + 2];
        der[0] = (byte) (utcTime ? BERTags.UTC_TIME : BERTags.GENERALIZED_TIME);
        der[1] = (byte) text.length;
        System.arraycopy(text, 0, der, 2, text.length);
        try {
            return new Time(ASN1Primitive.fromByteArray(der));
        } catch (IOException | IllegalArgumentException e) {
            throw new CertIOException("cannot encode the time " + at, e);
        }
    }

    /**
     * A server certificate for {@code name}: SAN dNSName or iPAddress, CN = name when it fits in 64 characters
     * (otherwise no subject and a critical SAN), keyUsage digitalSignature (plus keyEncipherment for an RSA leaf),
     * extendedKeyUsage serverAuth, basicConstraints CA:false, key identifiers, a random 128-bit serial.
     */
    public X509Certificate sign(SubjectName name, Instant notBefore, Instant notAfter) throws GeneralSecurityException {
        String text = name.key();
        boolean withCn = text.length() <= MAX_CN;
        X500Name subject = withCn ? Certificates.commonName(text) : new X500Name(new org.bouncycastle.asn1.x500.RDN[0]);
        GeneralName san = name.isIp()
                ? new GeneralName(GeneralName.iPAddress, new DEROctetString(name.address().getAddress()))
                : new GeneralName(GeneralName.dNSName, text);
        int usage = rsaLeaf ? KeyUsage.digitalSignature | KeyUsage.keyEncipherment : KeyUsage.digitalSignature;
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer, Certificates.serial(),
                    time(notBefore), time(notAfter), subject, leafKey)
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(usage))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                    .addExtension(Extension.subjectAlternativeName, !withCn, new GeneralNames(san))
                    .addExtension(Extension.subjectKeyIdentifier, false, subjectKeyId)
                    .addExtension(Extension.authorityKeyIdentifier, false, authorityKeyId);
            return Certificates.sign(builder, caKey);
        } catch (CertIOException e) {
            throw new CertificateEncodingException("cannot encode the certificate for " + text, e);
        }
    }
}
