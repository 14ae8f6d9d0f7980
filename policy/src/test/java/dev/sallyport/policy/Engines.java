package dev.sallyport.policy;

/** Policies the tests compile from YAML they spell out. */
final class Engines {

    /** The rules the deny-first tests share: {@code /public/secret/**} denied before {@code /public/**} allowed. */
    static final String DENY_FIRST = """
            rules:
              - name: no-secret
                action: deny
                hosts: [files.example.com]
                ports: [80]
                paths: ["/public/secret/**"]
              - name: public
                hosts: [files.example.com]
                ports: [80]
                paths: ["/public/**"]
            """;

    private Engines() {}

    /** {@code yaml} compiled; a test policy that does not load is the test's own mistake. */
    static PolicyEngine of(String yaml) {
        try {
            return PolicyEngine.compile(PolicyLoader.parse(yaml, "test.yaml"));
        } catch (PolicyException e) {
            throw new IllegalStateException(e);
        }
    }
}
