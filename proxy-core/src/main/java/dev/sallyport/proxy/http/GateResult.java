package dev.sallyport.proxy.http;

import dev.sallyport.policy.Decision;

/** What {@link RequestGate} concluded about one request head. */
sealed interface GateResult {

    /**
     * Refuse with {@code status}; {@code decision} is the policy's verdict when the policy made it, and
     * {@code target} the destination the request named, when it could be read (both nullable), so the audit
     * record says which host was refused.
     */
    record Refuse(int status, String reason, Decision decision, Authority target) implements GateResult {
        Refuse(int status, String reason, Decision decision) {
            this(status, reason, decision, null);
        }
    }

    /** Forward to {@code target}; {@code originForm} is the request target to send upstream. */
    record Forward(Authority target, boolean tls, String originForm, Decision decision, boolean websocket)
            implements GateResult {}
}
