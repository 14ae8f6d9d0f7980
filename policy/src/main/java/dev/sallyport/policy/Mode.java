package dev.sallyport.policy;

/** {@code mode}: enforce decisions, or only record them ({@code audit}: denies become would_deny). */
public enum Mode { ENFORCE, AUDIT }
