package dev.sallyport.proxy.reload;

import java.util.List;

/**
 * The outcome of one policy reload. On failure {@code errors} holds one line per problem
 * ({@code FILE:LINE:COL: path: message (expected: ...)}) and the old policy stays in force; {@code notes}
 * holds what a reload cannot apply (changed listen or admin addresses need a restart).
 */
public record ReloadResult(boolean success, List<String> errors, List<String> notes) {

    public ReloadResult {
        errors = List.copyOf(errors);
        notes = List.copyOf(notes);
    }

    public ReloadResult(boolean success, List<String> errors) {
        this(success, errors, List.of());
    }
}
