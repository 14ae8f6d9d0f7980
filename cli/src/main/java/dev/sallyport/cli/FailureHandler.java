package dev.sallyport.cli;

import dev.sallyport.ca.CaException;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.proxy.inject.SecretLoadException;

import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * Maps exceptions out of a subcommand to one stderr line (one per problem for policy and secret load errors)
 * and an exit code: configuration and usage problems (a secret that cannot be read at start, too)
 * exit 2, everything else 1. A stack trace is printed only with {@code SALLYPORT_DEBUG=1}.
 */
final class FailureHandler implements IExecutionExceptionHandler {

    @Override
    public int handleExecutionException(Exception ex, CommandLine cli, ParseResult parsed) {
        var err = cli.getErr();
        int code;
        switch (ex) {
            case PolicyException pe -> {
                pe.problems().forEach(p -> err.println(p));
                code = 2;
            }
            case SecretLoadException se -> {
                se.problems().forEach(p -> err.println("sallyport: " + p));
                code = 2;
            }
            case UsageException ue -> {
                err.println("sallyport: " + ue.getMessage());
                code = 2;
            }
            case CaException ce -> {
                err.println("sallyport: " + ce.getMessage());
                code = 1;
            }
            default -> {
                err.println("sallyport: " + oneLine(ex));
                code = 1;
            }
        }
        if (System.getenv("SALLYPORT_DEBUG") != null) {
            ex.printStackTrace(err);
        }
        err.flush();
        return code;
    }

    static String oneLine(Throwable t) {
        String message = t.getMessage();
        if (message == null || message.isBlank()) {
            message = t.getClass().getSimpleName();
        }
        Throwable cause = t.getCause();
        if (cause != null && cause.getMessage() != null && !message.contains(cause.getMessage())) {
            message += ": " + cause.getMessage();
        }
        return message.replace('\n', ' ');
    }
}
