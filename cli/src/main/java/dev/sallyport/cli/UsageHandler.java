package dev.sallyport.cli;

import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;

/** Bad command-line arguments: one line naming the problem, a pointer to --help, exit 2. */
final class UsageHandler implements IParameterExceptionHandler {

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine cli = ex.getCommandLine();
        cli.getErr().println("sallyport: " + ex.getMessage() + " (see '"
                + cli.getCommandSpec().qualifiedName() + " --help')");
        cli.getErr().flush();
        return 2;
    }
}
