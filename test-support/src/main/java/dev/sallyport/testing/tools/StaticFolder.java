package dev.sallyport.testing.tools;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Serves one folder read-only, as a plain file server or a Maven repository does: {@code GET} and {@code HEAD} of
 * a regular file below it (the route prefix removed) answer its bytes; a folder, a missing file, a path that
 * would leave the folder, and every other method are 404 or 405. Use it to serve the machine's own Maven
 * repository as a remote one.
 */
public final class StaticFolder implements HttpHandler {
    private final Path root;
    private final String mount;

    /** @param mount the route prefix it is mounted on, removed from the path before the folder is looked in */
    public StaticFolder(Path root, String mount) {
        this.root = root.toAbsolutePath().normalize();
        this.mount = mount.endsWith("/") ? mount : mount + "/";
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            HttpsSite.respond(exchange, 405, method + " on a read-only folder\n");
            return;
        }
        String path = exchange.getRequestURI().getPath();
        Path file = path.startsWith(mount) ? root.resolve(path.substring(mount.length())).normalize() : null;
        if (file == null || !file.startsWith(root) || !Files.isRegularFile(file)) {
            HttpsSite.respond(exchange, 404, "no such file: " + path + "\n");
            return;
        }
        String type = path.endsWith(".pom") || path.endsWith(".xml") ? "text/xml" : "application/octet-stream";
        HttpsSite.respond(exchange, 200, type, Files.readAllBytes(file));
    }
}
