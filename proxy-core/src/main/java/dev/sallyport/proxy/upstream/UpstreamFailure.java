package dev.sallyport.proxy.upstream;

/**
 * Why no upstream connection could be had: the status the client gets (403 for a policy denial at dial time,
 * 502 or 504 otherwise), a reason code, and one line naming the hop.
 */
public final class UpstreamFailure extends Exception {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String reason;
    private final String ip;

    public UpstreamFailure(int status, String reason, String message, String ip) {
        super(message, null, false, false);
        this.status = status;
        this.reason = reason;
        this.ip = ip;
    }

    public int status() { return status; }
    public String reason() { return reason; }
    /** The address involved, or null before one was chosen. */
    public String ip() { return ip; }
}
