package dev.sallyport.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** A missing prerequisite skips on a developer's machine and fails under CI, but for root in the unprivileged pass. */
class PrerequisitesTest {
    private static final Map<String, String> DEVELOPER = Map.of();
    private static final Map<String, String> CI = Map.of("CI", "true");
    private static final Map<String, String> UNPRIVILEGED_CI = Map.of("CI", "true",
            "SALLYPORT_UNPRIVILEGED_PASS", "1");

    @Test
    void aMetPrerequisiteNeitherSkipsNorFails() {
        assertThatCode(() -> Prerequisites.require("nft", true, "why", CI)).doesNotThrowAnyException();
        assertThatCode(() -> Prerequisites.require("nft", true, "why", DEVELOPER)).doesNotThrowAnyException();
    }

    @Test
    void aMissingPrerequisiteSkipsOnADevelopersMachine() {
        assertThatThrownBy(() -> Prerequisites.require("nft", false, "apt-get install nftables", DEVELOPER))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("prerequisite 'nft' missing: apt-get install nftables");
        assertThatThrownBy(() -> Prerequisites.require("nft", false, "why", Map.of("CI", "false")))
                .isInstanceOf(TestAbortedException.class);
    }

    @Test
    void aMissingPrerequisiteFailsUnderCi() {
        assertThatThrownBy(() -> Prerequisites.require("nft", false, "apt-get install nftables", CI))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessage("prerequisite 'nft' missing: apt-get install nftables (CI=true: expected every"
                        + " prerequisite to be installed; see scripts/test)");
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.ROOT, false, "netns", CI))
                .as("root is required in CI's root pass").isInstanceOf(AssertionFailedError.class);
    }

    @Test
    void theUnprivilegedPassSkipsRootOnlyTestsAndNothingElse() {
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.ROOT, false, "netns", UNPRIVILEGED_CI))
                .isInstanceOf(TestAbortedException.class);
        assertThatThrownBy(() -> Prerequisites.require("bwrap", false, "the sandbox", UNPRIVILEGED_CI))
                .isInstanceOf(AssertionFailedError.class);
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.ROOT, false, "netns",
                Map.of("SALLYPORT_UNPRIVILEGED_PASS", "1", "CI", "true", "X", "y")))
                .isInstanceOf(TestAbortedException.class);
    }

    @Test
    void aNormalRunnersCaseSkipsInTheRootPassAndFailsOnlyInTheUnprivilegedOne() {
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.NORMAL_USER, false, "uid", CI))
                .isInstanceOf(TestAbortedException.class);
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.NORMAL_USER, false, "uid", UNPRIVILEGED_CI))
                .isInstanceOf(AssertionFailedError.class);
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.NORMAL_USER, false, "uid", DEVELOPER))
                .isInstanceOf(TestAbortedException.class);
    }

    @Test
    void theRealEnvironmentDecides() {
        Class<? extends Throwable> expected = "true".equals(System.getenv("CI"))
                && !"1".equals(System.getenv("SALLYPORT_UNPRIVILEGED_PASS"))
                ? AssertionFailedError.class : TestAbortedException.class;
        assertThatThrownBy(() -> Prerequisites.require(Prerequisites.ROOT, false, "this test"))
                .isInstanceOf(expected);
    }

    @Test
    void rootIsReadFromTheKernel() {
        assertThat(Prerequisites.isRoot()).isEqualTo("root".equals(System.getProperty("user.name")));
    }
}
