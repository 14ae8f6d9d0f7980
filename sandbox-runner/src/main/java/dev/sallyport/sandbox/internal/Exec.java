package dev.sallyport.sandbox.internal;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Replaces the calling process with the sandboxed command ({@code execve(2)} from the calling thread, so the
 * command keeps exactly that thread's seccomp filter and Landlock domain and nothing of the JVM remains): the
 * working folder, a clean signal mask, every descriptor above stderr closed on exec, and {@code execvp}'s search
 * of the command's own {@code PATH} (a file without a {@code #!} line runs under {@code /bin/sh}, as execvp does).
 */
final class Exec {
    private static final int CLOSE_RANGE_CLOEXEC = 1 << 2;
    private static final int F_SETFD = 2;
    private static final int FD_CLOEXEC = 1;
    private static final int SIG_SETMASK = 2;
    private static final String DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";
    private static final Syscalls SYS = Syscalls.current();

    private Exec() {
    }

    /**
     * Runs {@code command} in place of this process. Returns only when that failed, with the reason (for a
     * "cannot start" line); on success it never returns.
     */
    static String execvp(List<String> command, Map<String, String> env, String cwd) {
        try (Arena arena = Arena.ofConfined()) {
            Syscalls.Result chdir = SYS.call("chdir", arena.allocateFrom(cwd).address(), 0, 0);
            if (chdir.failed()) {
                return "cannot enter " + cwd + ": " + Syscalls.errnoName(chdir.errno());
            }
            closeOnExec();
            MemorySegment emptyMask = arena.allocate(8, 8);
            SYS.call("rt_sigprocmask", SIG_SETMASK, emptyMask.address(), 0, 8, 0);
            MemorySegment envp = strings(arena, env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                    .sorted().toList());
            String name = command.getFirst();
            if (name.contains("/")) {
                int errno = exec(arena, name, command, envp);
                return name + ": " + Syscalls.errnoName(errno);
            }
            int denied = 0;
            String path = env.getOrDefault("PATH", DEFAULT_PATH);
            for (String dir : path.split(":", -1)) {
                String candidate = (dir.isEmpty() ? "." : dir) + "/" + name;
                int errno = exec(arena, candidate, command, envp);
                if (errno == Syscalls.EACCES) {
                    denied = errno;
                } else if (errno != Syscalls.ENOENT && errno != Syscalls.ENOTDIR) {
                    return candidate + ": " + Syscalls.errnoName(errno);
                }
            }
            return denied != 0 ? "found on PATH but not executable: " + Syscalls.errnoName(denied)
                    : "not found on PATH " + path;
        }
    }

    /** One {@code execve}, with execvp's fallback to {@code /bin/sh} for a file the kernel cannot run. */
    private static int exec(Arena arena, String file, List<String> command, MemorySegment envp) {
        MemorySegment argv = strings(arena, command);
        Syscalls.Result r = SYS.call("execve", arena.allocateFrom(file).address(), argv.address(), envp.address());
        if (r.errno() != Syscalls.ENOEXEC) {
            return r.errno();
        }
        List<String> viaShell = new ArrayList<>(List.of("/bin/sh", file));
        viaShell.addAll(command.subList(1, command.size()));
        r = SYS.call("execve", arena.allocateFrom("/bin/sh").address(), strings(arena, viaShell).address(),
                envp.address());
        return r.errno();
    }

    /** A NULL-terminated {@code char *[]}. */
    private static MemorySegment strings(Arena arena, List<String> values) {
        MemorySegment array = arena.allocate(8L * (values.size() + 1), 8);
        for (int i = 0; i < values.size(); i++) {
            array.set(ValueLayout.ADDRESS, 8L * i, arena.allocateFrom(values.get(i)));
        }
        array.set(ValueLayout.ADDRESS, 8L * values.size(), MemorySegment.NULL);
        return array;
    }

    /** Marks every descriptor above 2 close-on-exec: the command inherits stdio and nothing else of ours. */
    private static void closeOnExec() {
        if (!SYS.call("close_range", 3, 0xffffffffL, CLOSE_RANGE_CLOEXEC).failed()) {
            return;
        }
        // Kernels before 5.11: one fcntl per open descriptor.
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path p : fds.toList()) {
                int fd = Integer.parseInt(p.getFileName().toString());
                if (fd > 2) {
                    SYS.call("fcntl", fd, F_SETFD, FD_CLOEXEC);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // /proc missing: every descriptor of ours was opened close-on-exec anyway
        }
    }
}
