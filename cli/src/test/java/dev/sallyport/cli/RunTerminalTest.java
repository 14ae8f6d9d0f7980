package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sallyport run} under a real terminal: a pseudo-terminal whose slave is the runner's controlling terminal
 * and stdio, driven from its master by a small python3 program ({@link #DRIVER}), as a terminal emulator would.
 */
class RunTerminalTest {

    /**
     * Starts argv[1:] in a new session on a new pty (30 rows, 100 columns), copies what it writes to stdout, and
     * plays the terminal: once the command says {@code size 30x100} the window becomes 50x160 (TIOCSWINSZ on the
     * master: the kernel sends SIGWINCH to the terminal's foreground group, the runner's); once it says
     * {@code size 50x160} it types {@code q}, reads to the end of the output and exits with the runner's status;
     * 3 when a wait passes its deadline.
     */
    static final String DRIVER = """
            import fcntl, os, select, struct, sys, termios, time
            def resize(fd, rows, cols):
                fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
            master, slave = os.openpty()
            resize(slave, 30, 100)
            pid = os.fork()
            if pid == 0:
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(slave, fd)
                os.execvp(sys.argv[1], sys.argv[1:])
            os.close(slave)
            seen = b''
            def until(text, seconds):
                global seen
                deadline = time.monotonic() + seconds
                while text not in seen:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([master], [], [], left)[0]:
                        return False
                    try:
                        chunk = os.read(master, 4096)
                    except OSError:
                        return False
                    if not chunk:
                        return False
                    seen += chunk
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.flush()
                return True
            def finish(status):
                print('\\ndriver: ' + status, flush=True)
                sys.exit(3)
            if not until(b'size 30x100', 150):
                finish('no first size')
            resize(master, 50, 160)
            if not until(b'size 50x160', 30):
                finish('no new size after the resize')
            os.write(master, b'q\\n')
            if not until(b'bye', 30):
                finish('no bye after q')
            until(b'the end of the output', 60)
            sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """;

    /** Inside the sandbox: prints the window size at start and on every SIGWINCH, tries TIOCSTI, ends on a line. */
    static final String COMMAND = """
            import errno, fcntl, os, signal, sys, termios
            def show(*_):
                size = os.get_terminal_size(1)
                # os.write, not print: a SIGWINCH during print's own write would make print re-enter itself
                os.write(1, f'size {size.lines}x{size.columns}\\n'.encode())
            signal.signal(signal.SIGWINCH, show)
            try:
                fcntl.ioctl(0, termios.TIOCSTI, b'!')
                print('tiocsti injected', flush=True)
            except OSError as e:
                print('tiocsti refused ' + errno.errorcode[e.errno], flush=True)
            show()
            sys.stdin.readline()
            print('bye', flush=True)
            """;

    @TempDir
    Path dir;

    @Test
    void windowSizeChangesReachTheCommandAndItCannotPushInputIntoTheTerminal() throws Exception {
        Prerequisites.require("python3", Files.isExecutable(Path.of("/usr/bin/python3")), "apt-get install python3");
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path driver = Files.writeString(dir.resolve("pty-driver.py"), DRIVER);
        List<String> argv = new ArrayList<>(List.of("/usr/bin/python3", driver.toString()));
        argv.addAll(CliProcess.command("run", "--workdir", workspace.toString(), "--audit",
                dir.resolve("audit.jsonl").toString(), "--", "/usr/bin/python3", "-c", COMMAND));
        ExternalProcess.Result run = ExternalProcess.run(Duration.ofSeconds(240), argv, null);

        assertThat(run.exit()).as(run.stdout() + run.stderr()).isZero();
        assertThat(run.stdout()).contains("size 30x100", "size 50x160", "bye")
                // bwrap's --new-session: the command has no controlling terminal, so TIOCSTI is refused (EPERM;
                // EIO where the kernel turned legacy TIOCSTI off)
                .containsPattern("tiocsti refused (EPERM|EIO)").doesNotContain("tiocsti injected");

        // The same program on the same kind of terminal, not sandboxed: it gets every size and may inject
        // wherever the kernel still allows TIOCSTI to a terminal's own session, so the probe above is a real one.
        ExternalProcess.Result bare = ExternalProcess.run(Duration.ofSeconds(60),
                List.of("/usr/bin/python3", driver.toString(), "/usr/bin/python3", "-c", COMMAND), null);
        assertThat(bare.exit()).as(bare.stdout() + bare.stderr()).isZero();
        assertThat(bare.stdout()).contains("size 30x100", "size 50x160");
        Path legacy = Path.of("/proc/sys/dev/tty/legacy_tiocsti");      // Linux 6.2+; always allowed before
        if (!Files.exists(legacy) || Files.readString(legacy).strip().equals("1")) {
            assertThat(bare.stdout()).contains("tiocsti injected");
        }
    }
}
