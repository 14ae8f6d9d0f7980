package dev.sallyport.proxy.audit;

import dev.sallyport.policy.StateDirectory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Ed25519 key that signs the audit log's checkpoints: one per state folder ({@value #FILE}, owner-only, both
 * halves in one PEM file so that a key is created with one atomic link), or one in memory for a run without a state
 * folder. The public half is what a reviewer pins: {@code sallyport audit key} prints it as a PEM
 * {@code PUBLIC KEY}, {@code sallyport audit verify --key} checks a log against it.
 */
public final class AuditKey {

    /** The key's file in the state folder. */
    public static final String FILE = "audit-key.pem";

    private static final Pattern BLOCK = Pattern.compile("-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");

    private final PrivateKey privateKey;
    private final PublicKey publicKey;

    private AuditKey(PrivateKey privateKey, PublicKey publicKey) {
        this.privateKey = privateKey;
        this.publicKey = publicKey;
    }

    /** A fresh key held only in memory. */
    public static AuditKey generate() {
        try {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            return new AuditKey(pair.getPrivate(), pair.getPublic());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 unavailable (expected: a standard JDK)", e);
        }
    }

    /** The key in {@code stateDir/audit-key.pem}, created (0600) first if missing; errors are one line naming the file. */
    public static AuditKey inStateFolder(Path stateDir) throws IOException {
        Path file = stateDir.resolve(FILE);
        try {
            if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                create(file);
            }
            if (Files.isSymbolicLink(file) || !Files.isRegularFile(file)) {
                throw new IOException(file + ": not a regular file (expected: the audit signing key in PEM)");
            }
            return parse(file, Files.readString(file, StandardCharsets.US_ASCII));
        } catch (FileSystemException e) {
            String why = e.getReason() != null ? e.getReason() : e.getClass().getSimpleName().replace("Exception", "");
            throw new IOException(file + ": cannot create or read the audit signing key: " + why
                    + " (expected: a state folder this user can write: $SALLYPORT_HOME, else ~/.local/share/sallyport)",
                    e);
        }
    }

    /** A public key from a PEM {@code PUBLIC KEY} file (what {@link #publicPem} wrote); one-line errors. */
    public static PublicKey readPublic(Path pem) throws IOException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            if (m.group(1).equals("PUBLIC KEY")) {
                try {
                    return publicKey(Base64.getMimeDecoder().decode(m.group(2)));
                } catch (GeneralSecurityException | IllegalArgumentException e) {
                    throw new IOException(pem + ": not an Ed25519 public key (" + e.getMessage() + ")", e);
                }
            }
        }
        throw new IOException(pem + ": no PEM PUBLIC KEY block (expected: what 'sallyport audit key' prints)");
    }

    /** The public key of its X.509 encoding, as a checkpoint carries it. */
    public static PublicKey publicKey(byte[] x509) throws GeneralSecurityException {
        return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(x509));
    }

    public PublicKey publicKey() {
        return publicKey;
    }

    /** {@code SHA256:} and the unpadded base64 of the public key's X.509 encoding's digest (as ssh shows keys). */
    public String fingerprint() {
        return fingerprint(publicKey);
    }

    public static String fingerprint(PublicKey key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
            return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable (expected: a standard JDK)", e);
        }
    }

    /** The public half as a PEM {@code PUBLIC KEY} block. */
    public String publicPem() {
        return pem("PUBLIC KEY", publicKey.getEncoded());
    }

    byte[] sign(byte[] message) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(privateKey);
            s.update(message);
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "AuditKey[" + fingerprint() + ", private half redacted]";
    }

    private static void create(Path file) throws IOException {
        if (!Files.isDirectory(file.getParent())) {
            Files.createDirectories(file.getParent(),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        AuditKey fresh = generate();
        Path tmp = Files.createTempFile(file.getParent(), ".audit-key-", ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, pem("PRIVATE KEY", fresh.privateKey.getEncoded()) + fresh.publicPem(),
                    StandardCharsets.US_ASCII);
            StateDirectory.publishOnce(tmp, file);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static AuditKey parse(Path file, String text) throws IOException {
        byte[] privateDer = null;
        byte[] publicDer = null;
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            byte[] der = Base64.getMimeDecoder().decode(m.group(2));
            switch (m.group(1)) {
                case "PRIVATE KEY" -> privateDer = der;
                case "PUBLIC KEY" -> publicDer = der;
                default -> { }
            }
        }
        if (privateDer == null || publicDer == null) {
            throw new IOException(file + ": expected a PEM PRIVATE KEY and PUBLIC KEY block (delete the file to"
                    + " generate a new key; logs signed with the old one then verify only against the old public key)");
        }
        try {
            AuditKey key = new AuditKey(KeyFactory.getInstance("Ed25519")
                    .generatePrivate(new PKCS8EncodedKeySpec(privateDer)), publicKey(publicDer));
            byte[] probe = file.toString().getBytes(StandardCharsets.UTF_8);
            Signature check = Signature.getInstance("Ed25519");
            check.initVerify(key.publicKey);
            check.update(probe);
            if (!check.verify(key.sign(probe))) {
                throw new IOException(file + ": the PUBLIC KEY block is not the private key's (expected: the file as"
                        + " the proxy created it)");
            }
            return key;
        } catch (GeneralSecurityException e) {
            throw new IOException(file + ": not an Ed25519 key pair (" + e.getMessage() + ")", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
