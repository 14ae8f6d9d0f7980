package dev.sallyport.proxy.inject;

import java.util.List;

/**
 * One or more secrets could not be read at load. Each problem is one line naming the secret, its source
 * and what was expected, never a value; {@link #getMessage()} joins them with newlines.
 */
public final class SecretLoadException extends Exception {
    private static final long serialVersionUID = 1L;

    @SuppressWarnings("serial")     // an immutable List.copyOf; exceptions here are never serialized
    private final List<String> problems;

    public SecretLoadException(List<String> problems) {
        super(String.join("\n", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
