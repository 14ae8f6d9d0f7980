package dev.sallyport.policy;

import java.nio.file.Path;
import java.util.Objects;

/** Where a secret's value comes from: {@code env:NAME} or {@code file:PATH}. Holds the place, never the value. */
public sealed interface SecretSource {

    /** The value is in environment variable {@code variable}. */
    record Env(String variable) implements SecretSource {
        public Env {
            Objects.requireNonNull(variable, "variable");
            if (!SecretSpec.isEnvName(variable)) {
                throw new IllegalArgumentException("env: '" + variable
                        + "' (expected: an environment variable name, [A-Za-z_][A-Za-z0-9_]*)");
            }
        }
    }

    /** The value is the content of {@code path} (absolute), without a final newline. */
    record File(Path path) implements SecretSource {
        public File {
            Objects.requireNonNull(path, "path");
        }
    }
}
