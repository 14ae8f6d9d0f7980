package dev.sallyport.sandbox;

/** The sandbox could not be set up; the message is one line saying what, where and what was expected. */
public final class SandboxException extends Exception {
    private static final long serialVersionUID = 1L;

    public SandboxException(String message) {
        super(message);
    }

    public SandboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
