package dev.sallyport.cli;

/** Something failed while doing valid work: the CLI prints the message as one line and exits 1. */
public final class RuntimeFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public RuntimeFailure(String message) {
        super(message);
    }

    public RuntimeFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
