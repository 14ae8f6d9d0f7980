package dev.sallyport.proxy.inject;

import java.util.List;
import java.util.Objects;

/** What {@link ExchangeSecrets#inject} decided for one request. */
public sealed interface InjectionResult {

    /**
     * The request may go upstream. {@code secrets} names what was injected (possibly none): put them in
     * the audit record's {@code secrets} field and emit one {@code SecretInjected} event per name.
     */
    record Injected(List<String> secrets) implements InjectionResult {
        public Injected {
            secrets = List.copyOf(secrets);
        }
    }

    /**
     * The request must be answered {@code 403} with {@code X-Sallyport-Reason: reason} and not forwarded;
     * the headers were left unchanged. {@code secret} is the secret's name, {@code where} the place
     * ({@code header X-Api-Key}, {@code url}, {@code body}): both safe to audit and log, never a value.
     */
    record Refused(String reason, String secret, String where) implements InjectionResult {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(secret, "secret");
            Objects.requireNonNull(where, "where");
        }
    }
}
