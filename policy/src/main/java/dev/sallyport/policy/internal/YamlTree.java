package dev.sallyport.policy.internal;

import dev.sallyport.policy.PolicyProblem;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Typed reads of a composed YAML node tree that record a {@link PolicyProblem} (with the node's line and
 * column) for every mistake instead of stopping at the first. Readers return null after recording a
 * problem, so the caller carries on with the next key.
 */
public final class YamlTree {

    private final String file;
    private final List<PolicyProblem> problems = new ArrayList<>();

    public YamlTree(String file) {
        this.file = file;
    }

    public List<PolicyProblem> problems() {
        return problems;
    }

    /** Records a problem at {@code node} (1-based line and column). */
    public void problem(Node node, String path, String message, String expected) {
        problems.add(new PolicyProblem(file, node.getStartMark().getLine() + 1,
                node.getStartMark().getColumn() + 1, path, message, expected));
    }

    /** Records a problem at a known position (YAML syntax errors). */
    public void problem(int line, int column, String path, String message, String expected) {
        problems.add(new PolicyProblem(file, line, column, path, message, expected));
    }

    /**
     * The entries of a mapping, first occurrence of each key, in file order; unknown and duplicate keys and
     * non-scalar keys are problems. Null (after a problem) when {@code node} is not a mapping.
     */
    public Map<String, Node> mapping(Node node, String path, Set<String> allowed) {
        if (!(node instanceof MappingNode map)) {
            problem(node, path, "is " + kind(node), "a mapping with keys " + String.join(", ", sorted(allowed)));
            return null;
        }
        Map<String, Node> out = new LinkedHashMap<>();
        for (NodeTuple t : map.getValue()) {
            Node k = t.getKeyNode();
            if (!(k instanceof ScalarNode ks) || k.getTag().equals(Tag.MERGE)) {
                problem(k, path, "has a key that is " + kind(k), "plain keys, one of " + String.join(", ",
                        sorted(allowed)));
                continue;
            }
            String key = ks.getValue();
            String keyPath = path.isEmpty() ? key : path + "." + key;
            if (!allowed.contains(key)) {
                problem(k, path.isEmpty() ? key : keyPath, "unknown key '" + key + "'",
                        "one of " + String.join(", ", sorted(allowed)));
            } else if (out.containsKey(key)) {
                problem(k, keyPath, "duplicate key '" + key + "'", "each key at most once");
            } else {
                out.put(key, t.getValueNode());
            }
        }
        return out;
    }

    /** The items of a sequence; null (after a problem) otherwise. */
    public List<Node> sequence(Node node, String path, String expectedItems) {
        if (node instanceof SequenceNode seq) {
            return seq.getValue();
        }
        problem(node, path, "is " + kind(node), "a list of " + expectedItems);
        return null;
    }

    /** A non-empty scalar's text; null (after a problem) otherwise. */
    public String string(Node node, String path, String expected) {
        if (!(node instanceof ScalarNode s) || node.getTag().equals(Tag.NULL)) {
            problem(node, path, "is " + kind(node), expected);
            return null;
        }
        if (s.getValue().isEmpty()) {
            problem(node, path, "is empty", expected);
            return null;
        }
        return s.getValue();
    }

    /** A decimal integer in [min, max]; no signs, hex, octal or underscores. */
    public Long integer(Node node, String path, long min, long max) {
        String expected = "a decimal number " + min + ".." + max;
        if (!(node instanceof ScalarNode s) || !node.getTag().equals(Tag.INT)) {
            problem(node, path, "is " + kind(node), expected);
            return null;
        }
        String v = s.getValue();
        if (!v.chars().allMatch(c -> c >= '0' && c <= '9') || v.length() > 19 || (v.length() > 1 && v.charAt(0) == '0')) {
            problem(node, path, "'" + v + "' is not a plain decimal number", expected);
            return null;
        }
        BigInteger n = new BigInteger(v);
        if (n.compareTo(BigInteger.valueOf(min)) < 0 || n.compareTo(BigInteger.valueOf(max)) > 0) {
            problem(node, path, v + " is out of range", expected);
            return null;
        }
        return n.longValue();
    }

    /** {@code true} or {@code false} (not yes/no/on/off). */
    public Boolean bool(Node node, String path) {
        if (node instanceof ScalarNode s && (s.getValue().equals("true") || s.getValue().equals("false"))
                && node.getTag().equals(Tag.BOOL)) {
            return Boolean.valueOf(s.getValue());
        }
        problem(node, path, "is " + kind(node), "true or false");
        return null;
    }

    /** A scalar converted by {@code parse}, whose IllegalArgumentException message becomes the problem. */
    public <T> T parsed(Node node, String path, String expected, Function<String, T> parse) {
        String s = string(node, path, expected);
        if (s == null) {
            return null;
        }
        try {
            return parse.apply(s);
        } catch (IllegalArgumentException e) {
            problem(node, path, e.getMessage(), expected);
            return null;
        }
    }

    /** Each item of a list converted by {@code parse}; bad items are problems and left out. */
    public <T> List<T> list(Node node, String path, String expected, Function<String, T> parse) {
        List<Node> items = sequence(node, path, expected);
        if (items == null) {
            return null;
        }
        List<T> out = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            T v = parsed(items.get(i), path + "[" + i + "]", expected, parse);
            if (v != null) {
                out.add(v);
            }
        }
        return out;
    }

    /** How a node reads in an error message: "a list", "a mapping", "empty", "'text'". */
    public static String kind(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        if (node.getTag().equals(Tag.NULL)) {
            return "empty";
        }
        String v = ((ScalarNode) node).getValue();
        return "'" + (v.length() > 60 ? v.substring(0, 60) + "..." : v) + "'";
    }

    private static List<String> sorted(Set<String> keys) {
        return keys.stream().sorted().toList();
    }
}
