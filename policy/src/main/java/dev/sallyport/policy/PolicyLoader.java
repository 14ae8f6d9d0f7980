package dev.sallyport.policy;

import dev.sallyport.policy.internal.PolicyParser;
import dev.sallyport.policy.internal.YamlTree;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.List;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads a policy file (the YAML described in docs/REFERENCE.md and policy/README.md) into a {@link Policy}.
 * The YAML is composed into nodes (never constructed into objects), so every problem gets its line and
 * column, duplicate keys are seen, and no YAML tag can instantiate anything. Every problem in a file is
 * reported, each as {@code FILE:LINE:COL: path: message (expected: ...)}.
 */
public final class PolicyLoader {

    /** Largest policy file read (10 MiB): ten thousand rules fit easily. */
    public static final int MAX_BYTES = 10 << 20;

    private static final Comparator<PolicyProblem> IN_FILE_ORDER =
            Comparator.comparingInt(PolicyProblem::line).thenComparingInt(PolicyProblem::column);

    private PolicyLoader() {}

    /** Reads, parses and validates {@code file}; relative paths in it resolve against its folder. */
    public static Policy load(Path file) throws PolicyException {
        String name = file.toString();
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_BYTES) {
                throw single(name, "is larger than " + MAX_BYTES + " bytes", "a smaller policy file");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw single(name, "cannot be read: " + e.getClass().getSimpleName() + ": " + e.getMessage(),
                    "a readable policy file");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw single(name, "is not valid UTF-8", "a UTF-8 text file");
        }
        Path absolute = file.toAbsolutePath().normalize();
        Path dir = absolute.getParent() == null ? absolute : absolute.getParent();
        return parse(text, name, dir, absolute);
    }

    /** Parses policy text; relative paths resolve against the current directory. */
    public static Policy parse(String yaml, String fileName) throws PolicyException {
        return parse(yaml, fileName, Path.of("").toAbsolutePath(), null);
    }

    /** Parses policy text; relative paths resolve against {@code baseDir}. {@code source} is nullable. */
    public static Policy parse(String yaml, String fileName, Path baseDir, Path source) throws PolicyException {
        YamlTree tree = new YamlTree(fileName);
        Node root;
        try {
            root = new Yaml(options()).compose(new java.io.StringReader(yaml));
        } catch (MarkedYAMLException e) {
            Mark m = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            String msg = e.getProblem() != null ? e.getProblem() : "invalid YAML";
            if (e.getContext() != null) {
                msg = msg + " (" + e.getContext() + ")";
            }
            tree.problem(m == null ? 1 : m.getLine() + 1, m == null ? 1 : m.getColumn() + 1, "",
                    "YAML syntax error: " + oneLine(msg), "valid YAML");
            throw new PolicyException(tree.problems());
        } catch (YAMLException e) {
            tree.problem(1, 1, "", "YAML error: " + oneLine(String.valueOf(e.getMessage())), "valid YAML");
            throw new PolicyException(tree.problems());
        }
        PolicyParser parser = new PolicyParser(tree, baseDir, source);
        Policy policy = parser.parse(root);
        if (policy == null || !tree.problems().isEmpty()) {
            if (tree.problems().isEmpty()) {
                tree.problem(1, 1, "", "is not a valid policy", "a mapping of policy keys (proxy, rules, network, secrets, ...)");
            }
            List<PolicyProblem> problems = tree.problems();
            throw new PolicyException(problems.stream().sorted(IN_FILE_ORDER).toList());
        }
        return policy;
    }

    private static LoaderOptions options() {
        LoaderOptions o = new LoaderOptions();
        o.setAllowDuplicateKeys(true); // composing keeps duplicates; the parser reports them with positions
        o.setMaxAliasesForCollections(20);
        o.setAllowRecursiveKeys(false);
        o.setNestingDepthLimit(20);
        o.setCodePointLimit(MAX_BYTES);
        return o;
    }

    private static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\r', ' ').strip();
    }

    private static PolicyException single(String file, String message, String expected) {
        return new PolicyException(List.of(new PolicyProblem(file, 1, 1, "", message, expected)));
    }
}
