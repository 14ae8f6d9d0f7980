package dev.sallyport.ca;

import dev.sallyport.ca.internal.Certificates;
import dev.sallyport.ca.internal.Pem;
import dev.sallyport.ca.internal.SecureFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sallyport's certificate authority: a CA certificate and its private key, which {@link LeafMinter} signs leaf
 * certificates with. Created on disk ({@link #init}), loaded from disk ({@link #load}), or held only in memory
 * ({@link #ephemeral}). Immutable and thread-safe. The key never leaves this package except through the files
 * {@link #init} writes.
 */
public final class CertificateAuthority {
    /** The certificate file {@link #init} writes in its folder. */
    public static final String CERT_FILE = "ca.pem";
    /** The key file {@link #init} writes in its folder (PKCS#8 PEM, mode 0600). */
    public static final String KEY_FILE = "ca-key.pem";
    /** The name {@link #loadOrInit} gives a CA it creates. */
    public static final String DEFAULT_NAME = "Sallyport Local CA";
    /** The lifetime {@link #loadOrInit} gives a CA it creates (about ten years). */
    public static final int DEFAULT_DAYS = 3650;
    /** The lifetime of an {@link #ephemeral} CA. */
    public static final Duration EPHEMERAL_VALIDITY = Duration.ofDays(30);

    private static final Logger LOGGER = LoggerFactory.getLogger(CertificateAuthority.class);
    private static final Duration BACKDATE = Duration.ofHours(1);
    private static final int MAX_DAYS = 36_500;
    private static final int MAX_NAME = 64;
    private static final long MAX_FILE_BYTES = 1 << 20;

    private final X509Certificate certificate;
    private final PrivateKey key;
    private final String origin;

    private CertificateAuthority(X509Certificate certificate, PrivateKey key, String origin) {
        this.certificate = certificate;
        this.key = key;
        this.origin = origin;
    }

    /**
     * Loads a CA from a PEM certificate and a PEM private key (PKCS#8, or PKCS#1 / SEC1), checking that the key
     * belongs to the certificate, that the certificate is a CA allowed to sign certificates, and that it is
     * valid now.
     */
    public static CertificateAuthority load(Path certPem, Path keyPem) throws CaException {
        return load(certPem, keyPem, InstantSource.system());
    }

    /** {@link #load(Path, Path)} checking validity against {@code clock}. */
    public static CertificateAuthority load(Path certPem, Path keyPem, InstantSource clock) throws CaException {
        String what = "CA certificate " + certPem;
        X509Certificate cert = readFirstCertificate(certPem, what);
        String keyWhat = "CA key " + keyPem;
        PrivateKey key;
        try {
            key = Pem.readPrivateKey(read(keyPem, keyWhat));
        } catch (IllegalArgumentException e) {
            throw new CaException(keyWhat + ": " + e.getMessage()
                    + " (expected: an unencrypted PEM private key, -----BEGIN PRIVATE KEY-----)");
        }
        if (!Certificates.matches(key, cert.getPublicKey())) {
            throw new CaException(keyWhat + ": does not match the certificate " + certPem
                    + " (expected: the private key of that certificate)");
        }
        checkUsableCa(cert, what, clock.instant());
        warnIfReadableByOthers(keyPem);
        return new CertificateAuthority(cert, key, certPem.toString());
    }

    /** The first certificate of a PEM file, checked to be a CA certificate (validity is not checked). */
    static X509Certificate readCaCertificate(Path certPem) throws CaException {
        String what = "CA certificate " + certPem;
        X509Certificate cert = readFirstCertificate(certPem, what);
        if (cert.getBasicConstraints() < 0) {
            throw notACa(cert, what);
        }
        return cert;
    }

    private static X509Certificate readFirstCertificate(Path certPem, String what) throws CaException {
        List<X509Certificate> certs;
        try {
            certs = Pem.readCertificates(read(certPem, what));
        } catch (IllegalArgumentException e) {
            throw new CaException(what + ": " + e.getMessage() + " (expected: a PEM certificate)");
        }
        if (certs.isEmpty()) {
            throw new CaException(what + ": no PEM certificate found (expected: a block starting with "
                    + "-----BEGIN CERTIFICATE-----)");
        }
        return certs.getFirst();
    }

    private static CaException notACa(X509Certificate cert, String what) {
        return new CaException(what + ": " + cert.getSubjectX500Principal().getName()
                + " is not a CA certificate (expected: basicConstraints CA:true)");
    }

    private static void checkUsableCa(X509Certificate cert, String what, Instant now) throws CaException {
        if (cert.getBasicConstraints() < 0) {
            throw notACa(cert, what);
        }
        boolean[] usage = cert.getKeyUsage();
        if (usage != null && (usage.length <= 5 || !usage[5])) {
            throw new CaException(what + ": keyUsage lacks keyCertSign (expected: a CA allowed to sign certificates)");
        }
        if (now.isAfter(cert.getNotAfter().toInstant())) {
            throw new CaException(what + ": expired on " + cert.getNotAfter().toInstant()
                    + " (expected: a CA valid now; create a new one with 'sallyport ca init')");
        }
        if (now.isBefore(cert.getNotBefore().toInstant())) {
            throw new CaException(what + ": not valid before " + cert.getNotBefore().toInstant()
                    + " (expected: a CA valid now; check the system clock)");
        }
    }

    private static String read(Path file, String what) throws CaException {
        try {
            if (Files.isDirectory(file)) {
                throw new CaException(what + ": is a directory (expected: a PEM file)");
            }
            if (Files.exists(file) && !Files.isRegularFile(file)) {
                // a FIFO or a device: reading one could wait for ever, or never end
                throw new CaException(what + ": is not a regular file (expected: a PEM file)");
            }
            if (Files.size(file) > MAX_FILE_BYTES) {
                throw new CaException(what + ": larger than 1 MiB (expected: a PEM file)");
            }
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            throw new CaException(what + ": file not found (expected: an existing PEM file; "
                    + "create a CA with 'sallyport ca init')");
        } catch (IOException e) {
            throw new CaException(what + ": cannot read (" + Pem.oneLine(e) + ")", e);
        }
    }

    private static void warnIfReadableByOthers(Path keyPem) {
        try {
            if (keyPem.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                var perms = Files.getPosixFilePermissions(keyPem);
                if (perms.stream().anyMatch(p -> !p.name().startsWith("OWNER"))) {
                    LOGGER.warn("CA key file is accessible by other users path={} mode={} expected=rw-------",
                            keyPem, java.nio.file.attribute.PosixFilePermissions.toString(perms));
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            LOGGER.debug("cannot read CA key file permissions path={}", keyPem, e);
        }
    }

    /**
     * Creates a CA in {@code dir}: writes {@code dir/ca.pem} and {@code dir/ca-key.pem} (PKCS#8, created with
     * mode 0600), creating {@code dir} with mode 0700 if missing. Refuses if either file exists.
     *
     * @param name the CA's common name, 1 to 64 characters
     * @param days validity in days, 1 to 36500
     */
    public static CertificateAuthority init(Path dir, String name, KeyType type, int days) throws CaException {
        return init(dir, name, type, days, InstantSource.system());
    }

    /** {@link #init(Path, String, KeyType, int)} with the validity period starting at {@code clock}'s now. */
    public static CertificateAuthority init(Path dir, String name, KeyType type, int days, InstantSource clock)
            throws CaException {
        checkName(name);
        Objects.requireNonNull(type, "type");
        if (days < 1 || days > MAX_DAYS) {
            throw new CaException("days: " + days + " (expected: 1 to " + MAX_DAYS + ")");
        }
        Path certFile = dir.resolve(CERT_FILE);
        Path keyFile = dir.resolve(KEY_FILE);
        for (Path existing : List.of(keyFile, certFile)) {
            if (Files.exists(existing)) {
                throw refuse(existing);
            }
        }
        try {
            SecureFiles.createPrivateDirectories(dir);
        } catch (IOException e) {
            throw new CaException("CA folder " + dir + ": cannot create (" + Pem.oneLine(e)
                    + ") (expected: a writable folder)", e);
        }
        CertificateAuthority ca = create(name, type, Duration.ofDays(days), clock, dir.toString());
        write(keyFile, Pem.privateKey(ca.key), SecureFiles.OWNER_RW);
        try {
            write(certFile, Pem.certificate(ca.certificate), SecureFiles.PUBLIC_READ);
        } catch (CaException e) {
            deleteQuietly(keyFile);
            throw e;
        }
        LOGGER.info("created CA cert={} key={} type={} notAfter={}", certFile, keyFile, type.id(),
                ca.certificate.getNotAfter().toInstant());
        return ca;
    }

    private static void write(Path file, String pem, java.util.Set<java.nio.file.attribute.PosixFilePermission> mode)
            throws CaException {
        try {
            SecureFiles.writeNew(file, pem.getBytes(StandardCharsets.US_ASCII), mode);
        } catch (FileAlreadyExistsException e) {
            throw refuse(file);
        } catch (IOException e) {
            throw new CaException(file + ": cannot write (" + Pem.oneLine(e) + ") (expected: a writable folder)", e);
        }
    }

    private static CaException refuse(Path existing) {
        return new CaException(existing + ": already exists, refusing to overwrite a CA (expected: a folder without "
                + CERT_FILE + " and " + KEY_FILE + "; keep using that CA, or choose another --dir)");
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOGGER.warn("cannot remove partly written CA key path={}", file, e);
        }
    }

    private static void checkName(String name) throws CaException {
        if (name == null || name.isBlank() || name.length() > MAX_NAME || name.chars().anyMatch(c -> c < 0x20)) {
            throw new CaException("name: '" + (name == null ? "" : name.replaceAll("\\p{Cntrl}", "?"))
                    + "' (expected: 1 to " + MAX_NAME + " printable characters)");
        }
    }

    /**
     * Loads the CA in {@code dir} ({@code ca.pem} + {@code ca-key.pem}) or, when neither file exists, creates one
     * named {@value #DEFAULT_NAME} (EC P-256, {@value #DEFAULT_DAYS} days). One file without the other is an error.
     */
    public static CertificateAuthority loadOrInit(Path dir) throws CaException {
        Path certFile = dir.resolve(CERT_FILE);
        Path keyFile = dir.resolve(KEY_FILE);
        boolean hasCert = present(certFile, "CA certificate");
        boolean hasKey = present(keyFile, "CA key");
        if (hasCert && hasKey) {
            return load(certFile, keyFile);
        }
        if (hasCert || hasKey) {
            throw new CaException(dir + ": found " + (hasCert ? CERT_FILE : KEY_FILE) + " but not "
                    + (hasCert ? KEY_FILE : CERT_FILE) + " (expected: both files, or neither to create a new CA)");
        }
        try {
            return init(dir, DEFAULT_NAME, KeyType.EC_P256, DEFAULT_DAYS);
        } catch (CaException e) {
            if (Files.exists(certFile) && Files.exists(keyFile)) {
                return load(certFile, keyFile); // another process created it first
            }
            throw e;
        }
    }

    /**
     * Whether {@code file} exists; a file that cannot be looked up (a folder on the way that cannot be searched)
     * is an error, never taken for a missing one: a new CA must not be made over one that is there but unreadable.
     */
    private static boolean present(Path file, String what) throws CaException {
        try {
            Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw new CaException(what + " " + file + ": cannot read (" + Pem.oneLine(e) + ") (expected: a file "
                    + "this user can read, or none to create a new CA)", e);
        }
    }

    /** A fresh EC P-256 CA valid for {@link #EPHEMERAL_VALIDITY}, whose key exists only in this process's memory. */
    public static CertificateAuthority ephemeral(String name) {
        try {
            checkName(name);
        } catch (CaException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        return create(name, KeyType.EC_P256, EPHEMERAL_VALIDITY, InstantSource.system(), "ephemeral");
    }

    private static CertificateAuthority create(String name, KeyType type, Duration validity, InstantSource clock,
                                               String origin) {
        KeyPair keys = Certificates.generate(type);
        Instant now = clock.instant();
        X509Certificate cert = Certificates.selfSignedCa(keys, name, now.minus(BACKDATE), now.plus(validity));
        return new CertificateAuthority(cert, keys.getPrivate(), origin);
    }

    /** The CA certificate (what clients must trust). */
    public X509Certificate certificate() {
        return certificate;
    }

    /** The CA's key type, or {@code null} for a loaded key of another size. */
    public /* @Nullable */ KeyType keyType() {
        return Certificates.typeOf(certificate.getPublicKey());
    }

    /** Whether this CA was created in memory by {@link #ephemeral} (its key was never written anywhere). */
    public boolean isEphemeral() {
        return "ephemeral".equals(origin);
    }

    /** The signing key; package-private so it stays inside the CA module. */
    PrivateKey privateKey() {
        return key;
    }

    /** Subject, key type, expiry and origin; never key material. */
    @Override
    public String toString() {
        KeyType type = keyType();
        return "CertificateAuthority[subject=" + certificate.getSubjectX500Principal().getName()
                + ", key=" + (type == null ? certificate.getPublicKey().getAlgorithm() : type.id())
                + ", notAfter=" + certificate.getNotAfter().toInstant() + ", origin=" + origin + "]";
    }
}
