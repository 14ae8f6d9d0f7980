package dev.sallyport.cli;

/** A bad argument or configuration: the CLI prints the message as one line and exits 2. */
public final class UsageException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
