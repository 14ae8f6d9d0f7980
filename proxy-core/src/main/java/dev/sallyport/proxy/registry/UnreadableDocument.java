package dev.sallyport.proxy.registry;

/** A package document that could not be read as one: refused, never passed on unfiltered. */
public final class UnreadableDocument extends Exception {

    private static final long serialVersionUID = 1L;

    public UnreadableDocument(String message, Throwable cause) {
        super(message, cause);
    }
}
