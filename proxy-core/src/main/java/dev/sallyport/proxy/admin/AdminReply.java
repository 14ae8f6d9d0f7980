package dev.sallyport.proxy.admin;

import io.netty.handler.codec.http.HttpResponseStatus;

/** One admin response: status, content type, body, and an optional extra header. */
record AdminReply(HttpResponseStatus status, String contentType, String body, String headerName, String headerValue) {

    static final String TEXT = "text/plain; charset=utf-8";

    static AdminReply text(HttpResponseStatus status, String body) {
        return new AdminReply(status, TEXT, body, null, null);
    }

    AdminReply with(String name, String value) {
        return new AdminReply(status, contentType, body, name, value);
    }
}
