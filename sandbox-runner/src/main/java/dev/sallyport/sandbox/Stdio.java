package dev.sallyport.sandbox;

import java.lang.ProcessBuilder.Redirect;

/** Where the sandboxed command's stdin, stdout and stderr go. */
public record Stdio(Redirect in, Redirect out, Redirect err) {
    /** The caller's own stdio (a terminal stays a terminal). */
    public static Stdio inherit() {
        return new Stdio(Redirect.INHERIT, Redirect.INHERIT, Redirect.INHERIT);
    }

    /** Pipes, read through {@link RunningSandbox#process()} (tests). */
    public static Stdio pipes() {
        return new Stdio(Redirect.PIPE, Redirect.PIPE, Redirect.PIPE);
    }
}
