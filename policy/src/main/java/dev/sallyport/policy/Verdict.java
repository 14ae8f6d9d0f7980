package dev.sallyport.policy;

/** The outcome of a decision. */
public enum Verdict {
    ALLOW("allow"), DENY("deny"), WOULD_DENY("would_deny");

    private final String code;

    Verdict(String code) {
        this.code = code;
    }

    /** The audit record's {@code decision} value. */
    public String code() {
        return code;
    }
}
