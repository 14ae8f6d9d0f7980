package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.StateDirectory;
import dev.sallyport.sandbox.vm.VmRuntime;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's run API examples are the bodies of the methods below, so they compile; this test keeps the README's
 * text equal to them. {@link SandboxRunTest} runs the same shapes for real.
 */
class ReadmeExampleTest {

    /** README: the run API, process backend. */
    static int processRun() throws Exception {
        // begin
        Policy policy = PolicyLoader.load(Path.of("policy.yaml"));
        SandboxRun run = SandboxRun.builder(List.of("npm", "test"), Path.of("."))
                .policy(policy)                                    // default: deny everything
                .secret("NPM_TOKEN")                               // default: every secret of the policy
                .proxy(SandboxRun.ProxyMode.Own.auditUnder(StateDirectory.resolve()))  // default: the policy's audit
                .process(sandbox -> sandbox                        // what the command may see (SandboxSpec.Builder)
                        .passEnv("COLORTERM")
                        .readWrite(Path.of(System.getProperty("user.home"), ".npm"))
                        .requireLandlock(true)
                        .limits(ResourceLimits.defaults().withMemory(4L << 30)))
                .build();
        int status = run.run(System.out, System.err);             // the command's exit status
        // end
        return status;
    }

    /** README: the run API, a running proxy and the VM backend. */
    static int otherChoices(Policy policy) throws Exception {
        // begin
        SandboxRun.ProxyMode running = new SandboxRun.ProxyMode.Running(new InetSocketAddress("127.0.0.1", 3128),
                Files.readAllBytes(StateDirectory.resolve().resolve("ca/ca.pem")), StateDirectory.resolve());
        int viaRunningProxy = SandboxRun.builder(List.of("make"), Path.of(".")).policy(policy).proxy(running)
                .build().run(System.out, System.err);
        int inAVm = SandboxRun.builder(List.of("npm", "ci"), Path.of(".")).policy(policy)
                .backend(new SandboxRun.Backend.Nerdctl(VmRuntime.KATA, "node:22", false))   // true: print the plan
                .build().run(System.out, System.err);
        // end
        return viaRunningProxy + inAVm;
    }

    @Test
    void theReadmeShowsExactlyTheseExamples() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        String source = Files.readString(Path.of("src/test/java/dev/sallyport/sandbox/ReadmeExampleTest.java"));
        List<String> examples = new ArrayList<>();
        Matcher m = Pattern.compile("(?s)// begin\n(.*?)\n\\s*// end").matcher(source);
        while (m.find()) {
            examples.add(m.group(1).stripIndent());
        }
        assertThat(examples).hasSize(2);
        for (String example : examples) {
            assertThat(readme).contains("```java\n" + example + "\n```");
        }
    }
}
