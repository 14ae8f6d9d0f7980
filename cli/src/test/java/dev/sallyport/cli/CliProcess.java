package dev.sallyport.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.sallyport.testing.ExternalProcess;

/** Runs the CLI as its own JVM (the test class path), for behaviour that depends on the environment. */
final class CliProcess {

    private CliProcess() {}

    static ExternalProcess.Result run(Map<String, String> env, Duration timeout, String... args) {
        return run(List.of(), env, timeout, args);
    }

    /** {@link #run(Map, Duration, String...)} with options for the CLI's JVM (system properties). */
    static ExternalProcess.Result run(List<String> jvmOptions, Map<String, String> env, Duration timeout,
                                      String... args) {
        return ExternalProcess.run(timeout, command(jvmOptions, args), null, env);
    }

    /** The command line that runs the CLI with {@code args} (for a test that starts it some other way). */
    static List<String> command(String... args) {
        return command(List.of(), args);
    }

    /** {@link #command(String...)} with options for the CLI's JVM. */
    static List<String> command(List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        return command;
    }

    /**
     * The policy every end-to-end run test starts from: the test PKI's root trusted upstream, and one rule (named
     * {@code rule}) allowing the HTTPS upstream on 127.0.0.1:{@code port}, which the default deny list would
     * otherwise refuse. {@code more} is appended as is (indented rule keys first, then top-level keys).
     */
    static String loopbackUpstreamPolicy(Path rootPem, int port, String rule, String more) {
        return """
                upstream:
                  trust: [%s]
                network:
                  deny: default
                  allow_private: ["127.0.0.1:%d"]
                rules:
                  - name: %s
                    cidrs: [127.0.0.1/32]
                    ports: [%d]
                """.formatted(rootPem, port, rule, port) + more;
    }
}
