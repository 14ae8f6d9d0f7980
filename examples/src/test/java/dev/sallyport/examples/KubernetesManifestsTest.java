package dev.sallyport.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The Kustomize base in examples/kubernetes, offline: every document validates against the Kubernetes API schemas
 * of the npm package kubernetes-models (types, required fields, enums; run by node), the base lists every file,
 * its policy loads, and the Deployment has what running several replicas safely needs.
 */
class KubernetesManifestsTest {

    static final Path DIR = Path.of(System.getProperty("user.dir")).resolve("kubernetes");
    static final Path MODULES = Path.of(System.getenv().getOrDefault("SALLYPORT_TEST_NODE_MODULES",
            "/var/cache/sallyport-test/node"), "node_modules");

    @Test
    void everyManifestValidatesAgainstTheKubernetesSchemas() throws Exception {
        List<Path> files = manifests();
        assertThat(MODULES.resolve("kubernetes-models")).as("kubernetes-models (scripts/install-deps.sh installs it)")
                .isDirectory();
        List<String> command = new ArrayList<>(List.of("node", resource("validate-manifests.mjs").toString(),
                MODULES.toString()));
        files.forEach(f -> command.add(f.toString()));
        Process node = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out;
        try (InputStream in = node.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(node.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(node.exitValue()).as(out).isZero();
        long documents = files.stream().mapToLong(f -> documents(f).size()).sum();
        assertThat(out.lines().filter(l -> l.startsWith("ok ")).count()).as(out).isEqualTo(documents);
    }

    @Test
    void theValidatorRefusesAWrongType() throws Exception {
        Path bad = Files.createTempFile("bad-manifest", ".yaml");
        Files.writeString(bad, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: three}\n");
        Process node = new ProcessBuilder("node", resource("validate-manifests.mjs").toString(), MODULES.toString(),
                bad.toString()).redirectErrorStream(true).start();
        String out;
        try (InputStream in = node.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(node.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(node.exitValue()).isEqualTo(1);
        assertThat(out).contains("invalid").contains("replicas");
    }

    @Test
    void theBaseListsEveryManifest() throws IOException {
        Map<String, Object> kustomization = map(documents(DIR.resolve("kustomization.yaml")).getFirst());
        List<String> listed = strings(kustomization.get("resources"));
        assertThat(listed).containsExactlyInAnyOrderElementsOf(manifests().stream()
                .map(p -> p.getFileName().toString()).toList());
    }

    @Test
    void theDeploymentRunsReplicasReadOnlyWithProbesLimitsAndAGraceAboveTheProxys() throws Exception {
        Map<String, Object> deployment = map(documents(DIR.resolve("deployment.yaml")).getFirst());
        Map<String, Object> spec = map(deployment.get("spec"));
        assertThat((Integer) spec.get("replicas")).isGreaterThanOrEqualTo(2);
        Map<String, Object> pod = map(map(spec.get("template")).get("spec"));
        Map<String, Object> container = map(((List<?>) pod.get("containers")).getFirst());
        assertThat(map(map(container.get("readinessProbe")).get("httpGet"))).containsEntry("path", "/readyz")
                .containsEntry("port", "admin");
        assertThat(map(map(container.get("livenessProbe")).get("httpGet"))).containsEntry("path", "/healthz");
        Map<String, Object> security = map(container.get("securityContext"));
        assertThat(security).containsEntry("readOnlyRootFilesystem", true)
                .containsEntry("allowPrivilegeEscalation", false);
        assertThat(strings(map(security.get("capabilities")).get("drop"))).containsExactly("ALL");
        assertThat(map(pod.get("securityContext"))).containsEntry("runAsNonRoot", true);
        assertThat(map(map(container.get("resources")).get("requests"))).containsKeys("cpu", "memory");
        // the policy is mounted as a folder: a subPath mount would never see the ConfigMap's updates
        List<?> mounts = (List<?>) container.get("volumeMounts");
        assertThat(mounts).allSatisfy(m -> assertThat(map(m)).doesNotContainKey("subPath"));

        Map<String, Object> configMap = map(documents(DIR.resolve("configmap.yaml")).getFirst());
        Path policyFile = Files.createTempDirectory("k8s-policy").resolve("policy.yaml");
        Files.writeString(policyFile, (String) map(configMap.get("data")).get("policy.yaml"));
        Policy policy = PolicyLoader.load(policyFile);
        assertThat(policy.audit().isStdout()).isTrue();
        assertThat(policy.proxy().listen().host()).isEqualTo("0.0.0.0");
        assertThat(policy.proxy().timeouts().shutdownGrace().toSeconds())
                .isLessThan(((Integer) pod.get("terminationGracePeriodSeconds")).longValue());
        assertThat(strings(container.get("args"))).containsExactly("--config", "/etc/sallyport/policy/policy.yaml");
    }

    static List<Path> manifests() throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".yaml"))
                    .filter(p -> !p.getFileName().toString().equals("kustomization.yaml")).sorted().toList();
        }
    }

    static List<Object> documents(Path file) {
        try {
            List<Object> docs = new ArrayList<>();
            new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(Files.readString(file)).forEach(docs::add);
            return docs;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        assertThat(o).isInstanceOf(Map.class);
        return (Map<String, Object>) o;
    }

    static List<String> strings(Object o) {
        assertThat(o).isInstanceOf(List.class);
        return ((List<?>) o).stream().map(String::valueOf).toList();
    }

    static Path resource(String name) throws Exception {
        return Path.of(KubernetesManifestsTest.class.getResource("/" + name).toURI());
    }
}
