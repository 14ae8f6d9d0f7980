package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.sandbox.internal.CaptureRules;
import dev.sallyport.testing.Prerequisites;
import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.WatchService;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The host's resources, attacked from inside the real sandbox with small limits: filling each tmpfs, a fork bomb,
 * a memory hog, and taking every inotify instance. Every attack is bounded in count and time on its own, so it
 * cannot hurt the machine when a limit is missing.
 */
@Timeout(120)
@ExtendWith(Fixture.Extension.class)
class LimitsAttackTest {
    static final long MIB = ResourceLimits.MIB;

    @Test
    void everyWritableTmpfsStopsAtItsSize(Fixture f) throws Exception {
        ResourceLimits limits = ResourceLimits.defaults().withTmpfs(16 * MIB);
        Fixture.Run r = f.run(f.spec("for d in /tmp /dev/shm \"$HOME\"; do head -c 40M /dev/zero > \"$d/fill\";"
                + " echo \"$d exit=$? bytes=$(wc -c < \"$d/fill\")\"; rm -f \"$d/fill\"; done;"
                + " echo x > /dev/planted; echo dev=$?; echo x > /etc/ssl/private/planted; echo etcssl=$?")
                .limits(limits).build(), new byte[0]);
        for (String dir : new String[] {"/tmp", "/dev/shm", f.home.toString()}) {
            Matcher m = Pattern.compile(Pattern.quote(dir) + " exit=(\\d+) bytes=(\\d+)").matcher(r.out());
            assertThat(m.find()).as(dir + " in " + r.out()).isTrue();
            assertThat(m.group(1)).as(dir).isEqualTo("1");
            assertThat(Long.parseLong(m.group(2))).as(dir).isLessThanOrEqualTo(16 * MIB);
        }
        assertThat(r.err()).contains("No space left on device");
        assertThat(r.out()).contains("dev=2").doesNotContain("etcssl=0");
    }

    @Test
    void aForkBombStopsAtTheTaskLimit(Fixture f) throws Exception {
        f.script("bomb.py", """
                import os
                r, w = os.pipe()
                kids, error = [], None
                for i in range(400):
                    try:
                        pid = os.fork()
                    except OSError as e:
                        error = e
                        break
                    if pid == 0:
                        os.close(w)
                        os.read(r, 1)      # every child waits here until the parent closes the pipe
                        os._exit(0)
                    kids.append(pid)
                print("forked", len(kids), "then", error, flush=True)
                os.close(w)
                for k in kids:
                    os.waitpid(k, 0)
                """);
        ResourceLimits limits = ResourceLimits.defaults().withPids(64);
        Fixture.Run r = f.run(f.spec("python3 bomb.py").limits(limits).build(), new byte[0]);
        Matcher m = Pattern.compile("forked (\\d+) then \\[Errno 11\\] Resource temporarily unavailable").matcher(r.out());
        assertThat(m.find()).as(r.out() + r.err()).isTrue();
        int forked = Integer.parseInt(m.group(1));
        assertThat(forked).isBetween(1, 63);
        if (r.limits().startsWith("cgroup")) {
            assertThat(r.notices()).anySatisfy(line -> assertThat(line)
                    .startsWith("the sandbox reached its limit of 64 tasks: ").contains("(--pids; pids.events max "));
        }
        System.out.println("fork bomb: " + forked + " children under a limit of 64 tasks (" + r.limits() + ")");
    }

    @Test
    void aMemoryHogIsStoppedAndACgroupSaysSo(Fixture f) throws Exception {
        f.script("hog.py", """
                import sys
                chunks = []
                try:
                    for i in range(64):                      # at most 1 GiB, 16 MiB at a time
                        chunk = bytearray(16 << 20)
                        for j in range(0, len(chunk), 4096):
                            chunk[j] = 1                     # touch every page: resident, not just reserved
                        chunks.append(chunk)
                        print("allocated", 16 * len(chunks), "MiB", flush=True)
                    print("HOG DONE", flush=True)
                except MemoryError:
                    print("MemoryError after", 16 * len(chunks), "MiB", flush=True)
                """);
        ResourceLimits limits = ResourceLimits.defaults().withMemory(256 * MIB);
        Fixture.Run r = f.run(f.spec("python3 hog.py; echo exit=$?").limits(limits).build(), new byte[0]);
        assertThat(r.out()).doesNotContain("HOG DONE");
        Matcher m = Pattern.compile("allocated (\\d+) MiB\\n(?!allocated)").matcher(r.out());
        int reached = m.find() ? Integer.parseInt(m.group(1)) : 0;
        assertThat(reached).as(r.out()).isLessThan(256);
        if (r.limits().startsWith("cgroup")) {
            assertThat(r.out()).contains("exit=137");
            assertThat(r.notices()).anySatisfy(line -> assertThat(line).startsWith("the sandbox ran out of memory: "
                    + "the kernel killed 1 process at its memory limit of 256 MiB (--memory; memory."));
        } else {
            assertThat(r.out()).contains("MemoryError after");
        }
        System.out.println("memory hog: reached " + reached + " MiB under a limit of 256 MiB (" + r.limits() + ")");
    }

    /**
     * A file watcher (OpenCode's, an IDE's) works with the default share: before, the share was read a byte at a
     * time from a sysctl that answers only at offset 0, so it was 1 instance and 1 watch, and OpenCode waited forever
     * after its second watch failed with ENOSPC.
     */
    @Test
    void theDefaultInotifyShareLetsAWatcherWatchAProject(Fixture f) throws Exception {
        f.script("watch.py", """
                import ctypes, os
                libc = ctypes.CDLL(None, use_errno=True)
                fds = [libc.inotify_init1(0) for i in range(4)]
                for i in range(200):
                    os.makedirs(f'w/{i}', exist_ok=True)
                watches = [libc.inotify_add_watch(fds[i % 4], f'w/{i}'.encode(), 2) for i in range(200)]
                print('instances', sum(fd >= 0 for fd in fds), 'watches', sum(w >= 0 for w in watches), flush=True)
                """);
        Fixture.Run r = f.run("python3 watch.py");
        assertThat(r.out()).as(r.err()).contains("instances 4 watches 200");
    }

    @Test
    void theSandboxCannotTakeTheHostUsersWholeInotifyBudget(Fixture f) throws Exception {
        f.script("inotify.py", """
                import ctypes, sys
                libc = ctypes.CDLL(None, use_errno=True)
                fds = []
                for i in range(1000):
                    fd = libc.inotify_init1(0)
                    if fd < 0:
                        break
                    fds.append(fd)
                print("opened", len(fds), "errno", ctypes.get_errno(), flush=True)
                sys.stdin.readline()                        # hold them while the host tries
                """);
        ResourceLimits limits = ResourceLimits.defaults().withInotify(8, 1024);
        RunningSandbox sandbox = ProcessSandbox.start(f.spec("python3 inotify.py").limits(limits).build(), Stdio.pipes());
        try (BufferedReader out = sandbox.process().inputReader(StandardCharsets.UTF_8)) {
            CompletableFuture<String> opened = CompletableFuture.supplyAsync(() -> Fixture.readLine(out));
            assertThat(opened.get(60, TimeUnit.SECONDS)).isEqualTo("opened 8 errno 24");
            try (WatchService host = FileSystems.getDefault().newWatchService()) {
                assertThat(host).as("the host user can still watch files").isNotNull();
            }
            sandbox.process().getOutputStream().write('\n');
            sandbox.process().getOutputStream().close();
            assertThat(sandbox.waitFor(Fixture.TIMEOUT)).hasValue(0);
        } finally {
            sandbox.close();
        }
    }

    /**
     * The attack: the sandbox's connections cost the host's relay threads and descriptors, and the sandbox's task
     * limit does not count them. Each connection to its DNS port (port 53, relayed to
     * the proxy's DNS stub over TCP, which caps nothing and keeps a connection 10 s past its last byte) holds two
     * platform threads (one per direction, {@code Pump}) and two descriptors of the runner's JVM, and the proxy's
     * end a third. One sandbox process (its own descriptor limit is the host's, 20,000 here) with idle connections
     * takes the host's process ids (a pid_max of 32,768 is about 16,000 connections) and the runner's descriptors
     * (EMFILE: the relay's accept fails, and it closes the sandbox's listener for good). Measured: 2,000 connections
     * from {@code sallyport run}, 3,968 threads and 5,975 descriptors in the run's JVM, before the relay's budget.
     * Now a sandbox holds at most half its task limit in relayed connections (the next is closed as soon as it is
     * accepted): 600 tried under a task limit of 64 get 32, costing the host no more threads than the task limit.
     */
    @Test
    void idleConnectionsDoNotCostTheHostAThreadEach(Fixture f) throws Exception {
        Prerequisites.require("ip and nft", CaptureRules.tools().isPresent(),
                "iproute2 and nftables (scripts/install-deps.sh)");
        int connections = 600;
        f.script("hold.py", """
                import socket, sys
                held = []
                for i in range(%d):
                    try:
                        c = socket.create_connection(("127.0.0.1", 53), timeout=10)
                        if c.recv(1) != b"!":                    # the host's end answers once it is relayed
                            break
                        held.append(c)
                    except OSError as e:
                        print("stopped", e, flush=True)
                        break
                print("held", len(held), flush=True)
                sys.stdin.readline()                            # hold them while the host counts
                """.formatted(connections));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (ServerSocket stub = new ServerSocket(0, 1024, InetAddress.getLoopbackAddress())) {
            Queue<Socket> accepted = new ConcurrentLinkedQueue<>();
            Thread.ofPlatform().daemon().name("stand-in-dns-stub").start(() -> {
                while (!stub.isClosed()) {
                    try {
                        Socket s = stub.accept();
                        accepted.add(s);
                        s.getOutputStream().write('!');
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            InetSocketAddress at = (InetSocketAddress) stub.getLocalSocketAddress();
            ResourceLimits limits = ResourceLimits.defaults().withPids(64);
            int before = threads.getThreadCount();
            RunningSandbox sandbox = ProcessSandbox.start(f.spec("python3 hold.py").limits(limits)
                    .capture(new SandboxSpec.Capture(at, at)).build(), Stdio.pipes());
            try (BufferedReader out = sandbox.process().inputReader(StandardCharsets.UTF_8)) {
                CompletableFuture<String> held = CompletableFuture.supplyAsync(() -> Fixture.readLine(out));
                String line = held.get(90, TimeUnit.SECONDS);
                int during = threads.getThreadCount();
                System.out.println("relay: " + line + " cost the host " + (during - before) + " threads ("
                        + accepted.size() + " reached the stand-in stub)");
                assertThat(line).as("half the task limit, then closed").isEqualTo("held 32");
                assertThat(during - before).as(line + ": the host's threads while the sandbox holds them")
                        .isLessThanOrEqualTo(limits.pids() + 16);
                sandbox.process().getOutputStream().write('\n');
                sandbox.process().getOutputStream().close();
                assertThat(sandbox.waitFor(Fixture.TIMEOUT)).isPresent();
            } finally {
                sandbox.close();
                accepted.forEach(s -> {
                    try {
                        s.close();
                    } catch (IOException e) {
                        // the test's own stand-in: nothing to report
                    }
                });
            }
        }
    }
}
