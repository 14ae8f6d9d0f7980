package dev.sallyport.sandbox.vm;

/** A VM-backend run failed before or around the workload; the message is one line: where, what, expected. */
public final class VmRunException extends Exception {
    private static final long serialVersionUID = 1L;

    public VmRunException(String message) {
        super(message);
    }

    public VmRunException(String message, Throwable cause) {
        super(message, cause);
    }
}
