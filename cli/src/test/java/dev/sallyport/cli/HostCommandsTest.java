package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HostCommandsTest {

    @Test
    void doctorPrintsOneLinePerCheckAndExitsOneWhenSomethingFails() {
        CliRun run = CliRun.of("doctor");
        assertThat(run.out()).contains("nftables").contains("bubblewrap").contains("Landlock").contains("/dev/kvm");
        boolean anyFail = run.out().lines().anyMatch(l -> l.startsWith("FAIL"));
        assertThat(run.exit()).isEqualTo(anyFail ? 1 : 0);
        run.out().lines().filter(l -> l.startsWith("FAIL")).forEach(l -> assertThat(l).contains("(fix: "));
    }

    @Test
    void cleanupDryRunChangesNothing() {
        CliRun run = CliRun.of("cleanup", "--dry-run");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("nft list tables");
    }
}
