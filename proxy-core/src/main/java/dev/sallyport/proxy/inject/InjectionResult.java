package dev.sallyport.proxy.inject;

import java.util.List;
import java.util.Objects;

/** What {@link ExchangeSecrets#inject} decided for one request. */
public sealed interface InjectionResult {

    /**
     * The request may go upstream. {@code secrets} names what was injected (possibly none): put them in
     * the audit record's {@code secrets} field and emit one {@code SecretInjected} event per name.
     * {@code forwarded} names the secrets whose placeholder goes on unchanged (on their own hosts, outside the
     * listed headers): the audit record's {@code placeholders_forwarded}.
     */
    record Injected(List<String> secrets, List<String> forwarded) implements InjectionResult {
        public Injected {
            secrets = List.copyOf(secrets);
            forwarded = List.copyOf(forwarded);
        }

        /** Nothing forwarded unchanged. */
        public Injected(List<String> secrets) {
            this(secrets, List.of());
        }
    }

    /**
     * The request must be answered {@code 403} with {@code X-Sallyport-Reason: reason} and not forwarded;
     * the headers were left unchanged. {@code secret} is the secret's name (null for
     * {@code secret_unknown_placeholder}, which names none), {@code where} the place ({@code header X-Api-Key},
     * {@code url}, {@code body}): both safe to audit and log, never a value.
     */
    record Refused(String reason, String secret, String where) implements InjectionResult {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(where, "where");
        }

        /** The secret's name as the audit record's {@code secrets} holds it: one name, or none. */
        public List<String> secrets() {
            return secret == null ? List.of() : List.of(secret);
        }
    }
}
