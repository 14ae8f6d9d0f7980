package dev.sallyport.testing.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * An LLM host's streaming chat endpoint in the shape coding agents use (OpenAI-style chat completions): a
 * {@code POST} with a JSON body and the right {@code Authorization} is answered by {@code text/event-stream},
 * one {@code data:} event per piece of the reply, then {@code data: [DONE]}; a wrong credential gets
 * {@code 401}. Each reply streams in two parts: the first piece goes out at once and the rest waits for
 * {@link #release()} (at most a minute), so a test can see the first piece reach the client while the response
 * is still open, which nothing on the way may hold back.
 */
public final class ChatStream implements HttpHandler {
    private static final Duration HOLD = Duration.ofMinutes(1);

    private final String authorization;
    private final List<String> reply;
    private final Semaphore released = new Semaphore(0);

    /**
     * @param authorization the {@code Authorization} value it accepts
     * @param reply         the pieces of every reply (at least two: the first, and what waits for a release)
     */
    public ChatStream(String authorization, List<String> reply) {
        if (reply.size() < 2) {
            throw new IllegalArgumentException("reply: " + reply.size() + " pieces (expected: at least 2)");
        }
        this.authorization = authorization;
        this.reply = List.copyOf(reply);
    }

    /** Lets one held reply go on past its first piece. */
    public void release() {
        released.release();
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        if (!"POST".equals(exchange.getRequestMethod())) {
            HttpsSite.respond(exchange, 405, "POST a chat request\n");
            return;
        }
        if (!authorization.equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
            HttpsSite.respond(exchange, 401, "application/json", "{\"error\":{\"message\":\"invalid api key\"}}"
                    .getBytes(StandardCharsets.UTF_8));
            return;
        }
        try (exchange) {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.getResponseHeaders().set("Cache-Control", "no-cache");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            event(out, reply.getFirst());
            boolean go;
            try {
                go = released.tryAcquire(HOLD.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                go = false;
            }
            if (!go) {
                data(out, "{\"error\":{\"message\":\"the test never released this stream\"}}");
                return;
            }
            for (String piece : reply.subList(1, reply.size())) {
                event(out, piece);
            }
            data(out, "[DONE]");
            out.close();
        }
    }

    private static void event(OutputStream out, String piece) throws IOException {
        data(out, "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
                + Encodings.json(piece) + "}}]}");
    }

    private static void data(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
