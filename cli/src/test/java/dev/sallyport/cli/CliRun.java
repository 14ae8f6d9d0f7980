package dev.sallyport.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the CLI in-process with captured writers, as a user would from a shell. */
record CliRun(int exit, String out, String err) {

    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(exit, out.toString(), err.toString());
    }
}
