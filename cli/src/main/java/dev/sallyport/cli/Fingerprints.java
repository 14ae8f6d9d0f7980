package dev.sallyport.cli;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.HexFormat;

/** SHA-256 fingerprints in the colon-separated form that openssl prints. */
final class Fingerprints {

    private Fingerprints() {}

    static String sha256(X509Certificate cert) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
            return "SHA256:" + HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest);
        } catch (NoSuchAlgorithmException | CertificateEncodingException e) {
            throw new IllegalStateException("cannot fingerprint certificate: " + e.getMessage(), e);
        }
    }
}
