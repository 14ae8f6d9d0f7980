package dev.sallyport.policy;

import java.util.List;
import java.util.stream.Collectors;

/** A policy file that cannot be used; {@link #problems()} lists every problem found, in file order. */
public final class PolicyException extends Exception {

    private static final long serialVersionUID = 1L;

    private final transient List<PolicyProblem> problems;

    public PolicyException(List<PolicyProblem> problems) {
        super(problems.stream().map(PolicyProblem::toString).collect(Collectors.joining("\n")));
        if (problems.isEmpty()) {
            throw new IllegalArgumentException("problems: empty (expected: at least one)");
        }
        this.problems = List.copyOf(problems);
    }

    public List<PolicyProblem> problems() {
        return problems;
    }
}
