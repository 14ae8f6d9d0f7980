package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Escapes found by attacking the sandbox from inside, each tried again: the setup JVM as a pivot (also as older
 * kernels build the sandbox), kernel settings under {@code /proc}, and host services' unix sockets that lie in the
 * workspace (there at the start, created during the run, reached through links and relative paths, and raced).
 */
@Timeout(180)
class SandboxEscapeTest {
    @TempDir
    Path tmp;
    Fixture f;

    @BeforeEach
    void setUp() throws Exception {
        f = new Fixture(tmp);
    }

    @AfterEach
    void tearDown() {
        f.close();
    }

    /** A host service on a unix socket: greets every client, and counts them (the attack worked if it counts). */
    static final class HostDaemon implements AutoCloseable {
        final ServerSocketChannel server;
        final AtomicInteger accepted = new AtomicInteger();

        HostDaemon(Path path) throws IOException {
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(path));
            Thread.ofVirtual().start(() -> {
                while (server.isOpen()) {
                    try (SocketChannel c = server.accept()) {
                        accepted.incrementAndGet();
                        c.write(ByteBuffer.wrap("host-daemon\n".getBytes(StandardCharsets.UTF_8)));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    /**
     * HotSpot's attach protocol against every JVM the command can see: {@code .attach_pid} file, SIGQUIT, connect
     * to {@code /tmp/.java_pid}. The setup JVM was attachable below ABI 6 (no signal scoping), and an agent in it
     * acted outside the command's Landlock domain. Now no JVM of ours is left once the command runs.
     */
    @ParameterizedTest(name = "landlock ABI at most {0}")
    @ValueSource(ints = {Integer.MAX_VALUE, 5, 3, 0})
    void noJvmOfOursIsLeftToAttachTo(int abiCap) throws Exception {
        f.script("attach.py", """
                import glob, os, signal, socket, time
                jvms = []
                for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
                    try:
                        argv0 = open("/proc/%d/cmdline" % pid, "rb").read().split(b"\\0")[0]
                    except OSError:
                        continue
                    print("process", pid, argv0.decode(errors="replace"))
                    if argv0.endswith(b"/java") or argv0 == b"java":
                        jvms.append(pid)
                print("jvms", len(jvms))
                for pid in jvms:
                    for folder in ("/tmp", "/proc/%d/cwd" % pid):
                        try:
                            open("%s/.attach_pid%d" % (folder, pid), "w").close()
                        except OSError as e:
                            print("attach file", folder, "blocked", e.errno)
                    try:
                        os.kill(pid, signal.SIGQUIT)
                        print("sigquit", pid, "sent")
                    except OSError as e:
                        print("sigquit", pid, "blocked", e.errno)
                deadline = time.time() + 5
                while jvms and time.time() < deadline and not glob.glob("/tmp/.java_pid*"):
                    time.sleep(0.05)
                for path in glob.glob("/tmp/.java_pid*"):
                    s = socket.socket(socket.AF_UNIX)
                    try:
                        s.connect(path)
                        s.sendall(b"1\\0properties\\0\\0\\0\\0")
                        print("ATTACHED", path, s.recv(64))
                    except OSError as e:
                        print("attach socket", path, "blocked", e.errno)
                """);
        SandboxSpec spec = f.spec("python3 attach.py").build();
        try (SandboxSession session = new SandboxSession(ProcessSandbox.start(spec, Stdio.pipes(), abiCap))) {
            Fixture.Run r = session.finish();
            assertThat(r.out()).as(r.err()).contains("jvms 0").doesNotContain("ATTACHED");
            assertThat(r.exit()).isZero();
        }
    }

    /**
     * {@code /proc/sys} and friends are read-only mounts and the kernel-internals files are empty, whatever
     * Landlock offers: a root runner's command opened {@code core_pattern} for writing (a {@code |program} there
     * runs as host root at the next crash). Files are only opened for writing, never written.
     */
    @ParameterizedTest(name = "landlock ABI at most {0}")
    @ValueSource(ints = {Integer.MAX_VALUE, 0})
    void kernelSettingsAreReadOnlyAndKernelInternalsHidden(int abiCap) throws Exception {
        f.script("proc.py", """
                import os
                for path in ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/panic", "/proc/sys/vm/drop_caches",
                             "/proc/sys/kernel/randomize_va_space", "/proc/sysrq-trigger", "/proc/sys/fs/suid_dumpable"]:
                    if not os.path.exists(path):
                        continue
                    try:
                        os.close(os.open(path, os.O_WRONLY))
                        print("WRITABLE", path)
                    except OSError as e:
                        print("read-only", path, e.errno)
                ro = {}
                for line in open("/proc/self/mountinfo"):
                    fields = line.split()
                    ro[fields[4]] = "ro" in fields[5].split(",")
                for mount in ["/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs"]:
                    print("mount", mount, "ro" if ro.get(mount) else "WRITABLE")
                for path in ["/proc/keys", "/proc/timer_list", "/proc/kallsyms", "/proc/slabinfo", "/proc/vmallocinfo",
                             "/proc/kpageflags", "/proc/sched_debug", "/proc/interrupts", "/proc/kcore"]:
                    if os.path.exists(path):
                        try:
                            n = len(open(path, "rb").read(4096))
                        except OSError as e:
                            n = -e.errno
                        print("content", path, "EXPOSED" if n > 0 else "hidden")
                print("acpi entries", len(os.listdir("/proc/acpi")) if os.path.isdir("/proc/acpi") else 0)
                print("hostname", open("/proc/sys/kernel/hostname").read().strip())
                """);
        try (SandboxSession session = new SandboxSession(ProcessSandbox.start(f.spec("python3 proc.py").build(),
                Stdio.pipes(), abiCap))) {
            Fixture.Run r = session.finish();
            assertThat(r.out()).as(r.err()).contains("read-only /proc/sys/kernel/core_pattern",
                    "mount /proc/sys ro", "content /proc/keys hidden", "content /proc/timer_list hidden",
                    "content /proc/kallsyms hidden", "acpi entries 0", "hostname sallyport-sandbox")
                    .doesNotContain("WRITABLE").doesNotContain("EXPOSED");
        }
    }

    /** The sandbox's side of the socket attacks: its own servers, and one connect per named attempt. */
    static final String SOCKETS = """
            import os, socket, sys, threading
            ws = os.getcwd()
            def serve(path):
                s = socket.socket(socket.AF_UNIX)
                s.bind(path)
                s.listen(8)
                def loop():
                    while True:
                        c, _ = s.accept()
                        c.sendall(b"sandbox-own\\n")
                        c.close()
                threading.Thread(target=loop, daemon=True).start()
            def attempt(name, path):
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(10)
                try:
                    s.connect(path)
                    print(name, "CONNECTED", s.recv(64).decode().strip())
                except OSError as e:
                    print(name, "blocked", e.errno)
                finally:
                    s.close()
            def datagram(name, path):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                try:
                    s.sendto(b"leak", path)
                    print(name, "SENT")
                except OSError as e:
                    print(name, "blocked", e.errno)
            """;

    /**
     * A host daemon's socket in the workspace (git's fsmonitor daemon in {@code .git}, a database, an ssh
     * ControlPath) that is there when the sandbox starts is covered by an empty file: no connect, no datagram.
     */
    @Test
    void aHostSocketInTheWorkspaceAtTheStartIsCovered() throws Exception {
        Path ws = f.workspace;
        f.script("sockets.py", SOCKETS + """
                attempt("early", "early.sock")
                attempt("early-absolute", ws + "/early.sock")
                datagram("early-datagram", "early-datagram.sock")
                """);
        // A host datagram service: prints what it got once the test's "end" arrives (datagrams keep their order).
        Path datagramSocket = ws.resolve("early-datagram.sock");
        Process datagrams = new ProcessBuilder("python3", "-c", """
                import socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                s.bind(sys.argv[1])
                print("ready", flush=True)
                while (data := s.recv(64)) != b"end":
                    print("GOT", data, flush=True)
                """, datagramSocket.toString()).redirectErrorStream(true).start();
        try (HostDaemon early = new HostDaemon(ws.resolve("early.sock"))) {
            assertThat(datagrams.inputReader().readLine()).isEqualTo("ready");
            Fixture.Run r = f.run("python3 sockets.py");
            assertThat(r.out()).as(r.err()).contains("early blocked 111", "early-absolute blocked 111",
                    "early-datagram blocked 111").doesNotContain("host-daemon").doesNotContain("SENT");
            assertThat(early.accepted).hasValue(0);
        } finally {
            Process end = new ProcessBuilder("python3", "-c", "import socket, sys; socket.socket(socket.AF_UNIX, "
                    + "socket.SOCK_DGRAM).sendto(b'end', sys.argv[1])", datagramSocket.toString()).start();
            assertThat(end.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(datagrams.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(new String(datagrams.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .doesNotContain("GOT");
        }
    }

    /**
     * A host daemon's socket that appears in the workspace during the run, reached by its path, an absolute or
     * relative one, a symbolic link or {@code ..}, is refused by the host's connect supervisor; the command's own
     * sockets, in the workspace and in {@code /tmp}, keep working.
     */
    @Test
    void aHostSocketCreatedInTheWorkspaceDuringTheRunIsRefused() throws Exception {
        Path ws = f.workspace;
        f.script("sockets.py", SOCKETS + """
                serve(ws + "/own.sock")
                serve("/tmp/own.sock")
                os.symlink(ws + "/late.sock", "link-to-late")
                attempt("own-workspace", "own.sock")
                attempt("own-tmp", "/tmp/own.sock")
                print("ready", flush=True)
                sys.stdin.readline()
                attempt("late", "late.sock")
                attempt("late-absolute", ws + "/late.sock")
                attempt("late-link", "link-to-late")
                attempt("late-dotdot", "../" + os.path.basename(ws) + "/late.sock")
                attempt("own-workspace-again", "own.sock")
                """);
        try (SandboxSession session = new SandboxSession(f.spec("python3 sockets.py").build())) {
            session.awaitLine("ready");
            try (HostDaemon late = new HostDaemon(ws.resolve("late.sock"))) {
                // The host reaches it: the daemon works, so a refusal inside is the sandbox's doing.
                try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(ws.resolve("late.sock")))) {
                    assertThat(probe.read(ByteBuffer.allocate(64))).isPositive();
                }
                session.send("go");
                Fixture.Run r = session.finish();
                assertThat(r.out()).as(r.err()).contains("own-workspace CONNECTED sandbox-own",
                        "own-tmp CONNECTED sandbox-own", "late blocked 13", "late-absolute blocked 13",
                        "late-link blocked 13", "late-dotdot blocked 13", "own-workspace-again CONNECTED sandbox-own")
                        .doesNotContain("host-daemon");
                assertThat(late.accepted).as("the host's own probe only").hasValue(1);
            }
        }
    }

    /**
     * The supervisor reads the address once and connects to what it checked: a thread that swaps the address
     * between one of the command's own sockets and a host daemon's, while another connects in a loop, never gets
     * the daemon (2,000 connects).
     */
    @Test
    void swappingTheAddressDuringConnectNeverReachesTheHost() throws Exception {
        f.script("race.py", SOCKETS + """
                import ctypes, struct
                libc = ctypes.CDLL(None, use_errno=True)
                serve(ws + "/own.sock")
                def address(path):
                    raw = path.encode()
                    return struct.pack("H", socket.AF_UNIX) + raw + b"\\0" * (108 - len(raw))
                good, bad = address(ws + "/own.sock"), address(ws + "/hst.sock")
                buf = ctypes.create_string_buffer(good, 110)
                print("ready", flush=True)
                sys.stdin.readline()
                stop = False
                def flip():
                    while not stop:
                        ctypes.memmove(buf, bad, 110)
                        ctypes.memmove(buf, good, 110)
                threading.Thread(target=flip, daemon=True).start()
                counts = {"own": 0, "host": 0, "refused": 0}
                for i in range(2000):
                    s = socket.socket(socket.AF_UNIX)
                    if libc.connect(s.fileno(), buf, 110) == 0:
                        data = s.recv(64)
                        counts["host" if b"host" in data else "own"] += 1
                    else:
                        counts["refused"] += 1
                    s.close()
                stop = True
                print("own", counts["own"], "refused", counts["refused"], "host", counts["host"])
                """);
        try (SandboxSession session = new SandboxSession(f.spec("python3 race.py").build())) {
            session.awaitLine("ready");
            try (HostDaemon host = new HostDaemon(f.workspace.resolve("hst.sock"))) {
                session.send("go");
                Fixture.Run r = session.finish();
                assertThat(r.out()).as(r.err()).contains("host 0");
                assertThat(r.out()).doesNotContain("own 0 ");
                assertThat(host.accepted).hasValue(0);
            }
        }
    }
}
