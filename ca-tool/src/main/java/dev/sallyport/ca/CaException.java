package dev.sallyport.ca;

import java.io.Serial;

/**
 * A CA could not be created, loaded or used. The message is one line saying what failed, where (the file) and
 * what was expected, e.g. {@code CA key /x/ca-key.pem: file not found (expected: ...)}. It never contains key
 * material.
 */
public final class CaException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    public CaException(String message) {
        super(message);
    }

    public CaException(String message, Throwable cause) {
        super(message, cause);
    }
}
