package dev.sallyport.sandbox.doctor;

/**
 * One doctor result, printed as one line: {@code ok   nftables 1.0.6}, {@code warn NAME: DETAIL (fix: FIX)} or
 * {@code FAIL NAME: DETAIL (fix: FIX)}.
 */
public record Check(Status status, String name, String detail, String fix) {

    /** How a check came out. */
    public enum Status { OK, WARN, FAIL }

    public static Check ok(String name, String detail) {
        return new Check(Status.OK, name, detail, "");
    }

    public static Check warn(String name, String detail, String fix) {
        return new Check(Status.WARN, name, detail, fix);
    }

    public static Check fail(String name, String detail, String fix) {
        return new Check(Status.FAIL, name, detail, fix);
    }

    /** The printed line. */
    public String line() {
        return switch (status) {
            case OK -> "ok   " + name + (detail.isEmpty() ? "" : " " + detail);
            case WARN -> "warn " + name + ": " + detail + (fix.isEmpty() ? "" : " (fix: " + fix + ")");
            case FAIL -> "FAIL " + name + ": " + detail + (fix.isEmpty() ? "" : " (fix: " + fix + ")");
        };
    }
}
