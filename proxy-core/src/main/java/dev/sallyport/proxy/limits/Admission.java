package dev.sallyport.proxy.limits;

/** Whether a new connection or tunnel may open: it may, its client holds its limit, or the proxy holds its own. */
public enum Admission {
    ADMITTED,
    CLIENT_LIMIT,
    PROXY_LIMIT
}
