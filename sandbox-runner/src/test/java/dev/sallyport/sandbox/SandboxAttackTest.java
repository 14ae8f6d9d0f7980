package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.Prerequisites;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Starts the real sandbox and attacks it from inside. Each attempt must fail, and the reason (the errno text the
 * tool prints) must be visible in the output.
 */
@Timeout(120)
class SandboxAttackTest {
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

    /** A host TCP listener that counts connections (the attack succeeded if it counts one). */
    static final class CountingServer implements AutoCloseable {
        final ServerSocket server;
        final AtomicInteger accepted = new AtomicInteger();

        CountingServer(InetAddress address) throws IOException {
            server = new ServerSocket(0, 16, address);
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try (Socket _ = server.accept()) {
                        accepted.incrementAndGet();
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        int port() {
            return server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    @Test
    void directTcpToTheHostLoopbackFails() throws Exception {
        try (CountingServer host = new CountingServer(InetAddress.getLoopbackAddress())) {
            Fixture.Run r = f.run("curl -sS -m 10 --noproxy '*' http://127.0.0.1:" + host.port() + "/; echo exit=$?");
            assertThat(r.out()).contains("exit=7");
            assertThat(r.err()).containsAnyOf("Permission denied", "Connection refused", "Couldn't connect");
            assertThat(host.accepted).hasValue(0);
        }
    }

    @Test
    void directTcpToAHostInANetworkNamespaceTheTestMadeFails() throws Exception {
        Prerequisites.requireRoot("a network namespace the test makes");
        Prerequisites.require("ip", TestNetns.hasIp(), "iproute2: apt-get install iproute2");
        try (TestNetns net = new TestNetns()) {
            // The host reaches it: the route exists outside the sandbox.
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(net.address, net.port), 10_000);
            }
            assertThat(net.serverOut.readLine()).startsWith("CONNECTED");
            Fixture.Run r = f.run("curl -sS -m 10 --noproxy '*' http://" + net.address + ":" + net.port + "/;"
                    + " echo exit=$?");
            assertThat(r.out()).contains("exit=7");
            assertThat(r.err()).containsAnyOf("Permission denied", "Network is unreachable", "Couldn't connect");
        }
    }

    @Test
    void directTcpToTheProxyPortOnTheHostFailsAndOnlyTheForwarderAnswers() throws Exception {
        int proxyPort = f.proxy.getAddress().getPort();
        Fixture.Run r = f.run("curl -sS -m 10 --noproxy '*' http://127.0.0.1:" + proxyPort + "/; echo exit=$?");
        assertThat(r.out()).contains("exit=7");
        assertThat(f.proxyRequests).isEmpty();
    }

    @Test
    void ipv6LoopbackOfTheHostIsUnreachable() throws Exception {
        InetAddress v6 = InetAddress.getByName("::1");
        try (CountingServer host = new CountingServer(v6)) {
            Fixture.Run r = f.run("curl -g -sS -m 10 --noproxy '*' 'http://[::1]:" + host.port() + "/'; echo exit=$?");
            assertThat(r.out()).contains("exit=7");
            assertThat(r.err()).containsAnyOf("Permission denied", "Connection refused", "Couldn't connect");
            assertThat(host.accepted).hasValue(0);
            assertThat(v6).isInstanceOf(Inet6Address.class);
        }
    }

    @Test
    void dnsHasNoResolver() throws Exception {
        Fixture.Run r = f.run("cat /etc/resolv.conf; getent hosts registry.example.invalid; echo getent=$?;"
                + " curl -sS -m 10 --noproxy '*' http://registry.example.invalid/; echo curl=$?");
        assertThat(r.out()).contains("no DNS here").contains("getent=2").contains("curl=6");
        assertThat(r.err()).contains("Could not resolve host");
    }

    @Test
    void udpDoesNotLeaveTheSandbox() throws Exception {
        try (DatagramSocket host = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            host.setSoTimeout(1000);
            f.script("udp.py", """
                    import socket, sys
                    for target in [("127.0.0.1", %d), ("127.0.0.53", 53)]:
                        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        try:
                            s.sendto(b"leak", target)
                            s.settimeout(1)
                            s.recvfrom(100)
                            print("udp", target, "answered")
                        except OSError as e:
                            print("udp", target, "blocked:", e)
                    """.formatted(host.getLocalPort()));
            Fixture.Run r = f.run("python3 udp.py");
            assertThat(r.out()).contains("('127.0.0.1', " + host.getLocalPort() + ") blocked")
                    .contains("('127.0.0.53', 53) blocked").doesNotContain("answered");
            DatagramPacket packet = new DatagramPacket(new byte[100], 100);
            boolean received;
            try {
                host.receive(packet);
                received = true;
            } catch (SocketTimeoutException expected) {
                received = false;
            }
            assertThat(received).as("a datagram reached the host").isFalse();
        }
    }

    @Test
    void rawAndPacketSocketsAreRefused() throws Exception {
        f.script("raw.py", """
                import socket
                for name, fam, typ in [("packet", socket.AF_PACKET, socket.SOCK_RAW),
                                       ("raw-inet", socket.AF_INET, socket.SOCK_RAW),
                                       ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
                                       ("vsock", 40, socket.SOCK_STREAM)]:
                    try:
                        socket.socket(fam, typ)
                        print(name, "OPENED")
                    except OSError as e:
                        print(name, "blocked:", e)
                """);
        Fixture.Run r = f.run("python3 raw.py");
        assertThat(r.out()).doesNotContain("OPENED")
                .contains("packet blocked: [Errno 1] Operation not permitted")
                .contains("raw-inet blocked: [Errno 1] Operation not permitted")
                .contains("netlink blocked: [Errno 1]").contains("vsock blocked: [Errno 1]");
    }

    @Test
    void abstractUnixSocketsOfTheHostAreUnreachable() throws Exception {
        String name = "sallyport-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        Path hostScript = Files.writeString(tmp.resolve("abstract-server.py"), """
                import socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind("\\0%s")
                s.listen(1)
                print("ready", flush=True)
                s.settimeout(20)
                try:
                    c, _ = s.accept()
                    print("CONNECTED", flush=True)
                except socket.timeout:
                    print("nobody", flush=True)
                """.formatted(name));
        Process server = new ProcessBuilder("python3", hostScript.toString()).redirectErrorStream(true).start();
        try {
            var lines = server.inputReader();
            assertThat(lines.readLine()).isEqualTo("ready");
            f.script("abstract.py", """
                    import socket
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    try:
                        s.connect("\\0%s")
                        print("abstract CONNECTED")
                    except OSError as e:
                        print("abstract blocked:", e)
                    """.formatted(name));
            Fixture.Run r = f.run("python3 abstract.py");
            assertThat(r.out()).contains("abstract blocked:").doesNotContain("CONNECTED");
        } finally {
            server.destroyForcibly();
            server.waitFor();
        }
    }

    @Test
    void writesOutsideTheWorkspaceFail() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Fixture.Run r = f.run("echo x > /usr/local/planted; echo usr=$?; echo x >> /etc/passwd; echo etc=$?;"
                + " echo x > " + outside + "/planted; echo outside=$?; mkdir -p /var/planted; echo var=$?;"
                + " echo x > /run/sallyport/launch; echo run=$?; echo ok > inside.txt; echo ws=$?");
        assertThat(r.out()).contains("usr=2", "etc=2", "outside=2", "var=1", "run=2", "ws=0");
        assertThat(r.err()).containsAnyOf("Read-only file system", "Permission denied");
        assertThat(outside.resolve("planted")).doesNotExist();
        assertThat(f.workspace.resolve("inside.txt")).hasContent("ok");
    }

    @Test
    void gitInTheStrictModeIsReadOnlyAndCannotBeMovedAway() throws Exception {
        Path hooks = Files.createDirectories(f.workspace.resolve(".git/hooks"));
        Files.writeString(f.workspace.resolve(".git/config"), "[core]\n");
        Fixture.Run r = f.run(f.spec("echo evil > .git/hooks/pre-commit; echo hook=$?; echo '[core] fsmonitor=evil' >> "
                + ".git/config; echo config=$?; mv .git .git-away; echo mv=$?; rm -rf .git; echo rm=$?;"
                + " mkdir -p .git-new/hooks && echo evil > .git-new/hooks/pre-commit && mv .git-new .git; echo swap=$?")
                .gitWritable(false).build(), new byte[0]);
        assertThat(r.out()).contains("hook=2", "config=2", "mv=1", "rm=1", "swap=1");
        assertThat(r.err()).containsAnyOf("Read-only file system", "Device or resource busy");
        assertThat(hooks.resolve("pre-commit")).doesNotExist();
        assertThat(f.workspace.resolve(".git/config")).hasContent("[core]\n");
        assertThat(f.workspace.resolve(".git-away")).doesNotExist();
    }

    @Test
    void writableGitStillProtectsHooksAndConfigAgainstRenames() throws Exception {
        Path hooks = Files.createDirectories(f.workspace.resolve(".git/hooks"));
        Files.writeString(f.workspace.resolve(".git/config"), "[core]\n");
        SandboxSpec spec = f.spec("echo ref > .git/ORIG_HEAD; echo objects=$?; echo evil > .git/hooks/post-checkout;"
                + " echo hook=$?; echo x >> .git/config; echo config=$?; mv .git/hooks .git/hooks-away; echo mvhooks=$?;"
                + " mv .git .git-away; echo mvgit=$?; mkdir .g2; mv -T .g2 .git; echo replace=$?").build();
        Fixture.Run r = f.run(spec, new byte[0]);
        assertThat(r.out()).contains("objects=0", "hook=2", "config=2", "mvhooks=1", "mvgit=1", "replace=1");
        assertThat(hooks.resolve("post-checkout")).doesNotExist();
        assertThat(f.workspace.resolve(".git/ORIG_HEAD")).hasContent("ref");
        assertThat(f.workspace.resolve(".git/config")).hasContent("[core]\n");
    }

    @Test
    void missingEditorAndShellFilesCannotBeCreatedAndLeaveNoTrace() throws Exception {
        Fixture.Run r = f.run("echo 'curl evil' > .envrc; echo envrc=$?; mkdir -p .vscode; echo '{}' > "
                + ".vscode/tasks.json; echo tasks=$?; echo evil >> .bashrc; echo rc=$?");
        assertThat(r.out()).contains("envrc=0", "tasks=2", "rc=2");
        assertThat(f.workspace.resolve(".envrc")).as("held back, not live").doesNotExist();
        assertThat(f.held().item(".envrc")).isPresent();
        assertThat(f.workspace.resolve(".vscode")).doesNotExist();
        assertThat(f.workspace.resolve(".bashrc")).doesNotExist();
    }

    @Test
    void hostSecretsUnderEtcAreNotVisible() throws Exception {
        // /etc is shown, its secrets as empty files and folders (SandboxEverydayToolsTest reads every one)
        Fixture.Run r = f.run("echo shadow=$(cat /etc/shadow 2>/dev/null | wc -c); echo sudoers=$(cat /etc/sudoers"
                + " 2>/dev/null | wc -c); echo hostkeys=$(ls /etc/ssh 2>/dev/null | grep -c '^ssh_host_.*_key$');"
                + " echo private=$(ls -A /etc/ssl/private 2>/dev/null | wc -l)");
        assertThat(r.out()).contains("shadow=0\n", "sudoers=0\n", "hostkeys=0\n", "private=0\n");
    }

    @Test
    void theHostHomeIsHidden() throws Exception {
        Fixture.Run r = f.run("cat $HOME/.ssh/id_ed25519; echo cat=$?; ls -A $HOME | wc -l; echo x > $HOME/scratch;"
                + " echo homewrite=$?");
        assertThat(r.out()).contains("cat=1", "homewrite=0").doesNotContain("FAKE-PRIVATE-KEY");
        assertThat(r.err()).contains("No such file or directory");
        assertThat(f.home.resolve("scratch")).doesNotExist();
    }

    @Test
    void ptraceOfAnotherProcessIsRefused() throws Exception {
        f.script("ptrace.py", """
                import ctypes, subprocess
                libc = ctypes.CDLL(None, use_errno=True)
                victim = subprocess.Popen(["sleep", "30"])
                rc = libc.ptrace(16, victim.pid, None, None)  # PTRACE_ATTACH
                print("ptrace rc", rc, "errno", ctypes.get_errno())
                victim.kill()
                import os
                setup = [p for p in os.listdir("/proc") if p.isdigit()
                         and b"Inside" in open("/proc/%s/cmdline" % p, "rb").read()]
                print("setup processes found", len(setup))
                for pid in setup:
                    for what in ["mem", "environ"]:
                        try:
                            open("/proc/%s/%s" % (pid, what), "rb").read(1)
                            print(pid, what, "READ")
                        except OSError as e:
                            print(pid, what, "blocked:", e)
                """);
        Fixture.Run r = f.run("python3 ptrace.py; echo exit=$?");
        // bwrap's init (pid 1) carries "Inside" in its argv; the setup JVM replaced itself with the command.
        assertThat(r.out()).contains("ptrace rc -1 errno 1", "setup processes found 1", "1 mem blocked: [Errno 13]")
                .doesNotContain("READ");
    }

    @Test
    void namespacesCannotBeCreated() throws Exception {
        Fixture.Run r = f.run("unshare -U true; echo user=$?; unshare -n true; echo net=$?; unshare -m true; echo mnt=$?");
        assertThat(r.out()).contains("user=1", "net=1", "mnt=1");
        assertThat(r.err()).contains("Operation not permitted");
    }

    @Test
    void ioUringIsUnavailable() throws Exception {
        f.script("uring.py", """
                import ctypes
                libc = ctypes.CDLL(None, use_errno=True)
                params = ctypes.create_string_buffer(120)
                rc = libc.syscall(425, 8, params)
                print("io_uring_setup rc", rc, "errno", ctypes.get_errno())
                """);
        Fixture.Run r = f.run("python3 uring.py");
        assertThat(r.out()).contains("io_uring_setup rc -1 errno 38");
    }

    /**
     * Without capture too, a server the command starts on its own loopback answers it (a test suite's local server):
     * the network namespace is the sandbox's, so the host's loopback service on the very same port hears nothing, and
     * the root stays unwritable.
     */
    @Test
    void theCommandsOwnLoopbackServersAnswerItAndTheHostsOnTheSamePortHearNothing() throws Exception {
        try (CountingServer host = new CountingServer(InetAddress.getLoopbackAddress())) {
            f.script("serve.py", """
                    import socket, sys
                    s = socket.socket()
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("bound")
                    c = socket.create_connection(s.getsockname(), timeout=5)
                    a, _ = s.accept(); c.sendall(b"ping"); print("answered", a.recv(4).decode())
                    """);
            Fixture.Run r = f.run("python3 serve.py " + host.port() + "; echo x > /planted; echo root=$?");
            assertThat(r.out()).contains("bound", "answered ping", "root=2");
            assertThat(host.accepted).hasValue(0);
        }
    }
}
