package dev.sallyport.ca;

import java.util.Locale;

/** The key algorithms a Sallyport CA can be created with. Leaf keys are always EC P-256. */
public enum KeyType {
    /** ECDSA on NIST P-256: small, fast to sign with, accepted by every current TLS client. The default. */
    EC_P256("ec-p256", "EC", 256),
    /** RSA with a 2048-bit modulus, for clients that cannot verify ECDSA chains. */
    RSA_2048("rsa-2048", "RSA", 2048),
    /** RSA with a 4096-bit modulus: slower signing (every new host costs one 4096-bit signature). */
    RSA_4096("rsa-4096", "RSA", 4096);

    private final String id;
    private final String algorithm;
    private final int bits;

    KeyType(String id, String algorithm, int bits) {
        this.id = id;
        this.algorithm = algorithm;
        this.bits = bits;
    }

    /**
     * Parses the command-line spelling: {@code ec-p256}, {@code rsa-2048} or {@code rsa-4096} (case-insensitive).
     *
     * @throws IllegalArgumentException with a one-line reason for anything else
     */
    public static KeyType parse(String s) {
        String wanted = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
        for (KeyType type : values()) {
            if (type.id.equals(wanted)) {
                return type;
            }
        }
        throw new IllegalArgumentException("key type '" + s + "' is not supported (expected: ec-p256, rsa-2048 or rsa-4096)");
    }

    /** The command-line spelling, e.g. {@code ec-p256}. */
    public String id() {
        return id;
    }

    /** The JCA key algorithm name: {@code EC} or {@code RSA}. */
    public String algorithm() {
        return algorithm;
    }

    /** The key size in bits (curve size for EC). */
    public int bits() {
        return bits;
    }
}
