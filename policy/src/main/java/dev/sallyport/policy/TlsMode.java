package dev.sallyport.policy;

/** How an allowed CONNECT is handled: intercepted (requests decided one by one) or tunnelled as bytes. */
public enum TlsMode { INTERCEPT, PASSTHROUGH }
