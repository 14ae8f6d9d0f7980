package dev.sallyport.policy;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * What a request to a host of {@code git:} entries asks of git's smart HTTP protocol, read from its method, path
 * and query: the discovery that starts a push ({@code GET <repo>/info/refs?service=git-receive-pack}), the push
 * itself ({@code POST <repo>/git-receive-pack}), or something else (fetches, clones, the forge's pages), which the
 * entries leave alone. A request that names the receive-pack service in any other shape (another method, another
 * spelling, a path that does not normalize) reads as {@link Unreadable}: refused, since a server might still take
 * it as a push.
 */
public sealed interface GitRequest {

    /** The discovery request of a push to {@code repository}. */
    record PushDiscovery(String repository) implements GitRequest {}

    /** A push to {@code repository}: its body's ref updates decide. */
    record Push(String repository) implements GitRequest {}

    /** Names the receive-pack service in a shape not read here. */
    record Unreadable(String why) implements GitRequest {}

    /** Not a push. */
    record Other() implements GitRequest {}

    String SERVICE = "git-receive-pack";

    /** Reads {@code method originForm} (path and query as sent). */
    static GitRequest of(String method, String originForm) {
        int q = originForm.indexOf('?');
        String rawQuery = q < 0 ? "" : originForm.substring(q + 1);
        String query = decoded(rawQuery);
        String path;
        try {
            path = PathNormalizer.normalize(originForm);
        } catch (IllegalArgumentException e) {
            return mentions(originForm) ? new Unreadable("the path does not normalize: " + e.getMessage())
                    : new Other();
        }
        boolean get = method.equals("GET") || method.equals("HEAD");
        if (get && path.endsWith("/info/refs") && query.equals("service=" + SERVICE)) {
            return new PushDiscovery(repository(path, "/info/refs"));
        }
        if (method.equals("POST") && path.endsWith("/" + SERVICE) && rawQuery.isEmpty()) {
            return new Push(repository(path, "/" + SERVICE));
        }
        if (mentions(path) || mentions(query) || mentions(rawQuery)) {
            return new Unreadable(method + " " + HostNames.printable(path) + (rawQuery.isEmpty() ? ""
                    : "?" + HostNames.printable(rawQuery)) + " names " + SERVICE + " (expected: GET <repo>/info/refs"
                    + "?service=" + SERVICE + " or POST <repo>/" + SERVICE + ")");
        }
        return new Other();
    }

    /** The repository as entries name it: the path before {@code suffix}, no leading {@code /}, no {@code .git}. */
    private static String repository(String path, String suffix) {
        String r = path.substring(0, path.length() - suffix.length());
        r = r.startsWith("/") ? r.substring(1) : r;
        r = r.endsWith("/") ? r.substring(0, r.length() - 1) : r;
        return r.endsWith(".git") ? r.substring(0, r.length() - 4) : r;
    }

    private static boolean mentions(String text) {
        return text.toLowerCase(Locale.ROOT).contains("receive-pack");
    }

    private static String decoded(String query) {
        try {
            return URLDecoder.decode(query, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return query;
        }
    }
}
