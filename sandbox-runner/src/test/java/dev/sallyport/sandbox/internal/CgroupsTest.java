package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.ResourceLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading the kernel's cgroup files, and the cgroup this host gives a run (made, used for nothing, removed). */
class CgroupsTest {
    static final List<String> HYBRID = List.of(
            "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
            "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
            "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
            "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
            "50 31 0:40 /in\\040ns /mnt/odd\\040place rw shared:9 - cgroup2 cgroup2 rw");

    @Test
    void mountsAndOwnPathsAreRead() {
        List<Cgroups.Mount> mounts = Cgroups.mounts(HYBRID);
        assertThat(mounts).extracting(Cgroups.Mount::fsType).containsExactly("cgroup", "cgroup", "cgroup2", "cgroup2");
        assertThat(mounts.get(0).superOptions()).contains("memory");
        assertThat(mounts.get(3).root()).isEqualTo("/in ns");
        assertThat(mounts.get(3).mountPoint()).isEqualTo(Path.of("/mnt/odd place"));
        List<String> own = List.of("8:pids:/", "4:memory:/process_api/abc", "1:cpu,cpuacct:/x", "0::/user.slice/s.scope");
        assertThat(Cgroups.ownPath(own, "memory")).hasValue("/process_api/abc");
        assertThat(Cgroups.ownPath(own, "cpuacct")).hasValue("/x");
        assertThat(Cgroups.ownPath(own, "")).hasValue("/user.slice/s.scope");
        assertThat(Cgroups.folder(mounts.get(0), "/process_api/abc")).hasValue(Path.of("/sys/fs/cgroup/memory/process_api/abc"));
        assertThat(Cgroups.folder(mounts.get(1), "/")).hasValue(Path.of("/sys/fs/cgroup/pids"));
        assertThat(Cgroups.folder(mounts.get(3), "/in ns/a")).hasValue(Path.of("/mnt/odd place/a"));
        assertThat(Cgroups.folder(mounts.get(3), "/in nsX/a")).as("a sibling of the mount's root").isEmpty();
        assertThat(Cgroups.folder(mounts.get(3), "/elsewhere")).isEmpty();
    }

    @Test
    void aRunGetsACgroupWithItsLimitsWhereTheHostAllowsAndItIsRemovedAfter() throws Exception {
        ResourceLimits limits = ResourceLimits.defaults().withMemory(300 * ResourceLimits.MIB).withPids(77);
        LimitEnforcement e = Cgroups.create(limits);
        try {
            switch (e) {
                case LimitEnforcement.CgroupV2 v2 -> {
                    assertThat(v2.dir().resolve("memory.max")).hasContent(Long.toString(300L << 20));
                    assertThat(v2.dir().resolve("pids.max")).hasContent("77");
                }
                case LimitEnforcement.CgroupV1 v1 -> {
                    assertThat(v1.memory().resolve("memory.limit_in_bytes")).hasContent(Long.toString(300L << 20));
                    assertThat(v1.pids().resolve("pids.max")).hasContent("77");
                }
                case LimitEnforcement.Rlimits r -> assertThat(r.rlimits()).hasValue(limits);
            }
            assertThat(e.report()).as("nothing ran in it").isEmpty();
        } finally {
            e.remove();
        }
        for (Path p : e.procsFiles()) {
            assertThat(Files.exists(p.getParent())).as(p.getParent() + " removed").isFalse();
        }
        System.out.println("limits here: " + e.describe());
    }
}
