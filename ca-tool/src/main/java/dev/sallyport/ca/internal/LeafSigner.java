package dev.sallyport.ca.internal;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Date;
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
                    Date.from(notBefore), Date.from(notAfter), subject, leafKey)
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
