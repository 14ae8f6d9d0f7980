package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probes' record in the start-up cache: only what works is kept, only under the key of the same probes on the
 * same host, and only an intact record is used; a failed probe leaves nothing behind.
 */
class ProbeRecordTest {

    @Test
    void aRecordIsUsedOnlyUnderItsOwnKey(@TempDir Path dir) throws Exception {
        List<String> prefix = List.of("/usr/bin/setpriv", "--reuid=65533", "--regid=65533", "--clear-groups");
        byte[] key = ProbeRecord.key(prefix, Optional.empty());
        ProbeRecord.write(dir, key, Launcher.Probe.IPV4_AND_IPV6);
        assertThat(ProbeRecord.read(dir, key)).contains(Launcher.Probe.IPV4_AND_IPV6);
        assertThat(ProbeRecord.key(prefix, Optional.empty())).isEqualTo(key);   // the same host, the same probes
        List<String> otherUid = List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups");
        assertThat(ProbeRecord.read(dir, ProbeRecord.key(otherUid, Optional.empty()))).isEmpty();
        assertThat(ProbeRecord.read(dir, ProbeRecord.key(List.of(), Optional.empty()))).isEmpty();
        Path ip = Files.writeString(dir.resolve("ip"), "#!/bin/sh\n");
        Path nft = Files.writeString(dir.resolve("nft"), "#!/bin/sh\n");
        byte[] withCapture = ProbeRecord.key(prefix, Optional.of(new CaptureRules.Tools(ip, nft)));
        assertThat(ProbeRecord.read(dir, withCapture)).isEmpty();
        ProbeRecord.write(dir, withCapture, Launcher.Probe.IPV4);
        assertThat(ProbeRecord.read(dir, withCapture)).contains(Launcher.Probe.IPV4);
        Files.writeString(nft, "#!/bin/sh\nexit 0\n");   // another program under the same name: another key
        assertThat(ProbeRecord.read(dir, ProbeRecord.key(prefix, Optional.of(new CaptureRules.Tools(ip, nft)))))
                .isEmpty();
    }

    @Test
    void aDamagedRecordIsNotUsed(@TempDir Path dir) throws Exception {
        byte[] key = ProbeRecord.key(List.of(), Optional.empty());
        ProbeRecord.write(dir, key, Launcher.Probe.IPV4);
        Path file = dir.resolve(ProbeRecord.FILE);
        byte[] intact = Files.readAllBytes(file);
        byte[] renamed = intact.clone();
        renamed[renamed.length - 1] = 'X';   // no answer of that name
        Files.write(file, renamed);
        assertThat(ProbeRecord.read(dir, key)).isEmpty();
        Files.write(file, java.util.Arrays.copyOf(intact, 40));
        assertThat(ProbeRecord.read(dir, key)).isEmpty();
        byte[] magic = intact.clone();
        magic[0] = 'X';
        Files.write(file, magic);
        assertThat(ProbeRecord.read(dir, key)).isEmpty();
        Files.delete(file);
        Files.createSymbolicLink(file, Files.write(dir.resolve("elsewhere"), intact));
        assertThat(ProbeRecord.read(dir, key)).isEmpty();   // a link is not followed
    }

    @Test
    void aFailedProbeIsNotKept(@TempDir Path dir) {
        // a prefix that makes the layer's probe fail: /bin/false ignores the rest and exits 1
        List<String> failing = List.of("/bin/false", "sallyport-probe-record-test-" + System.nanoTime());
        ProbeRecord.probe(Optional.of(dir), failing, Optional.empty());
        assertThat(Launcher.userNamespaceLayer(failing)).isFalse();
        assertThat(dir.resolve(ProbeRecord.FILE)).doesNotExist();
    }

    @Test
    void aKeptRecordAnswersWithoutProbing(@TempDir Path dir) {
        // a prefix whose probe could never work (/bin/false): the record's answer is what the run gets
        List<String> prefix = List.of("/bin/false", "sallyport-probe-record-test-" + System.nanoTime());
        ProbeRecord.write(dir, ProbeRecord.key(prefix, Optional.empty()), Launcher.Probe.NONE);
        ProbeRecord.probe(Optional.of(dir), prefix, Optional.empty());
        assertThat(Launcher.userNamespaceLayer(prefix)).isTrue();
    }
}
