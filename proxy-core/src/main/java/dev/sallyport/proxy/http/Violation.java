package dev.sallyport.proxy.http;

/**
 * A request the framing guard refused: the status to answer and the machine-readable reason. Travels down the
 * pipeline as a message after the bytes that preceded the fault.
 */
public record Violation(int status, String reason) {}
