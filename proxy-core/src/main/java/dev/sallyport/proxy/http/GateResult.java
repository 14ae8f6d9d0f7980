package dev.sallyport.proxy.http;

import dev.sallyport.policy.Decision;

/** What {@link RequestGate} concluded about one request head. */
sealed interface GateResult {

    /** Refuse with {@code status}; {@code decision} is the policy's verdict when the policy made it. */
    record Refuse(int status, String reason, Decision decision) implements GateResult {}

    /** Forward to {@code target}; {@code originForm} is the request target to send upstream. */
    record Forward(Authority target, boolean tls, String originForm, Decision decision, boolean websocket)
            implements GateResult {}
}
