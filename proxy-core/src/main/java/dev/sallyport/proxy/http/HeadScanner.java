package dev.sallyport.proxy.http;

import dev.sallyport.proxy.exchange.Trailers;

import java.util.Locale;

/**
 * Validates a request head (or a chunked trailer) byte by byte, stricter than Netty's decoder: CRLF only, no
 * obs-fold, no control characters, token header names, one Host, one Content-Length, no Content-Length with
 * Transfer-Encoding, only {@code chunked} as transfer coding, no trailer field a trailer may not carry
 * ({@link Trailers}), and the size limits. Remembers the framing.
 */
final class HeadScanner {

    enum Step { MORE, DONE }

    private static final int CAPTURE = 64;

    private final int maxLine;
    private final int maxHead;
    private final boolean trailer;
    private final StringBuilder line = new StringBuilder();
    private int lineNo;
    private int headBytes;
    private boolean sawCr;
    private boolean inName = true;
    private int nameLen;
    private int lineLen;
    private String name;
    private int hosts;
    private int contentLengths;
    private int transferEncodings;
    private long contentLength = -1;
    private boolean chunked;
    private boolean http10;
    private Violation violation;

    HeadScanner(int maxLine, int maxHead, boolean trailer) {
        this.maxLine = maxLine;
        this.maxHead = maxHead;
        this.trailer = trailer;
    }

    boolean started() { return headBytes > 0; }
    Violation violation() { return violation; }
    long contentLength() { return contentLength; }
    boolean chunked() { return chunked; }

    /** Feeds one byte; returns DONE at the empty line that ends the head, null on a violation. */
    Step feed(byte b) {
        headBytes++;
        boolean requestLine = lineNo == 0 && !trailer;
        if (requestLine && lineLen >= maxLine) {
            return fail(414, "request_line_too_long");
        }
        if (!requestLine && headBytes > maxHead) {
            return fail(431, "headers_too_large");
        }
        if (sawCr) {
            sawCr = false;
            return b == '\n' ? endOfLine() : fail(400, "bare_cr");
        }
        if (b == '\r') {
            sawCr = true;
            return Step.MORE;
        }
        if (b == '\n') {
            return fail(400, "bare_lf");
        }
        if (lineLen == 0 && lineNo > 0 && (b == ' ' || b == '\t')) {
            return fail(400, "obs_fold");
        }
        if ((b < 0x20 && b != '\t') || b == 0x7f) {
            return fail(400, "control_character");
        }
        lineLen++;
        if (requestLine) {
            line.append((char) (b & 0xff));
            return Step.MORE;
        }
        if (inName) {
            if (b == ':') {
                if (nameLen == 0) {
                    return fail(400, "invalid_header_name");
                }
                inName = false;
                name = line.toString().toLowerCase(Locale.ROOT);
                line.setLength(0);
            } else if (!Tokens.isTchar(b)) {
                return fail(400, "invalid_header_name");
            } else {
                nameLen++;
                if (line.length() < CAPTURE) {
                    line.append((char) (b & 0xff));
                }
            }
        } else if (line.length() <= CAPTURE) {
            line.append((char) (b & 0xff));
        }
        return Step.MORE;
    }

    private Step endOfLine() {
        try {
            if (lineLen == 0) {
                if (lineNo == 0 && !trailer) {
                    return Step.MORE;            // RFC 9112 2.2: ignore empty lines before the request line
                }
                return finish();
            }
            if (lineNo == 0 && !trailer) {
                return requestLine(line.toString());
            }
            if (inName) {
                return fail(400, "invalid_header_name");
            }
            // a framing field's value is read whole or not at all: its first CAPTURE characters could say chunked
            // while the decoder behind reads the rest (found by HttpFramingFuzzTest)
            boolean cut = line.length() > CAPTURE;
            return header(name, cut && framing(name) ? null : line.toString().strip());
        } finally {
            if (violation == null) {
                lineNo += lineLen == 0 ? 0 : 1;
                line.setLength(0);
                lineLen = 0;
                nameLen = 0;
                inName = true;
                name = null;
            }
        }
    }

    private Step requestLine(String text) {
        String[] parts = text.split(" ", -1);
        if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty()
                || !Tokens.isToken(parts[0]) || parts[1].indexOf('\t') >= 0) {
            return fail(400, "malformed_request_line");
        }
        if (!parts[2].equals("HTTP/1.1") && !parts[2].equals("HTTP/1.0")) {
            return fail(505, "unsupported_http_version");
        }
        http10 = parts[2].equals("HTTP/1.0");
        return Step.MORE;
    }

    private static boolean framing(String headerName) {
        return headerName.equals("content-length") || headerName.equals("transfer-encoding");
    }

    /** A header line; {@code value} null when a framing field's value was too long to read whole. */
    private Step header(String headerName, String value) {
        if (trailer) {
            return Trailers.isForbidden(headerName) ? fail(400, Trailers.FORBIDDEN) : Step.MORE;
        }
        switch (headerName) {
            case "host" -> hosts++;
            case "content-length" -> {
                contentLengths++;
                if (value == null || value.isEmpty() || value.length() > 18 || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    return fail(400, "invalid_content_length");
                }
                contentLength = Long.parseLong(value);
            }
            case "transfer-encoding" -> {
                transferEncodings++;
                chunked = value != null && value.equalsIgnoreCase("chunked");
                if (!chunked) {
                    return fail(400, "unsupported_transfer_encoding");
                }
            }
            default -> { }
        }
        return Step.MORE;
    }

    private Step finish() {
        if (hosts > 1) {
            return fail(400, "duplicate_host");
        }
        if (contentLengths > 1) {
            return fail(400, "duplicate_content_length");
        }
        if (transferEncodings > 1) {
            return fail(400, "duplicate_transfer_encoding");
        }
        if (contentLengths > 0 && transferEncodings > 0) {
            return fail(400, "content_length_with_transfer_encoding");
        }
        if (http10 && transferEncodings > 0) {
            return fail(400, "unsupported_transfer_encoding");    // RFC 9112 6.1: faulty framing in HTTP/1.0
        }
        return Step.DONE;
    }

    private Step fail(int status, String reason) {
        violation = new Violation(status, reason);
        return null;
    }
}
