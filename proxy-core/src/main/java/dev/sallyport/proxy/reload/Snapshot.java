package dev.sallyport.proxy.reload;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.proxy.inject.SecretStore;
import java.util.Objects;

/**
 * The policy and the secrets in force, swapped as one on reload: an exchange takes one snapshot when it starts and
 * decides, injects and scrubs from it, so no request is ever decided by new rules and injected from old secrets
 * (or the other way round).
 */
public record Snapshot(PolicyEngine engine, SecretStore secrets) {

    public Snapshot {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(secrets, "secrets");
    }

    public Policy policy() {
        return engine.policy();
    }
}
