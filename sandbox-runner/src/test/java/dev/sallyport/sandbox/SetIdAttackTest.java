package dev.sallyport.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Set-user-ID and set-group-ID files left in the workspace for the host to run later: every way the command could
 * give a file one of the bits, tried from inside the real sandbox; files that carry one already; and the check
 * after the run that removes bits the filter did not see being set.
 */
@Timeout(120)
@ExtendWith(Fixture.Extension.class)
class SetIdAttackTest {
    @Test
    void noCallInsideCanSetTheSetuidOrSetgidBit(Fixture f) throws Exception {
        Path ro = Files.createDirectories(f.root.resolve("ro"));
        Path tool = Files.writeString(ro.resolve("suid-tool"), "#!/bin/sh\necho tool\n");
        chmod(tool, 04755);
        new ProcessBuilder("tar", "-C", ro.toString(), "-cf", ro.resolve("suid.tar").toString(), "suid-tool")
                .inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        f.script("setid.py", """
                import ctypes, os, platform, stat
                libc = ctypes.CDLL(None, use_errno=True)
                os.umask(0)
                AT_FDCWD = -100
                NR = {"x86_64": dict(open=2, creat=85, chmod=90, fchmod=91, mknod=133, openat=257, mknodat=259,
                                     fchmodat=268, openat2=437, fchmodat2=452),
                      "aarch64": dict(fchmod=52, fchmodat=53, mknodat=33, openat=56, openat2=437, fchmodat2=452)}
                nr = NR[platform.machine()]
                def attempt(name, fn):
                    try:
                        fn()
                        print(name, "done")
                    except OSError as e:
                        print(name, "blocked errno", e.errno)
                def raw(name, *args):
                    def call():
                        rc = libc.syscall(nr[name], *args)
                        if rc < 0:
                            raise OSError(ctypes.get_errno(), name)
                        if name.startswith("open") or name == "creat":
                            os.close(rc)
                    attempt("raw " + name, call)
                def new(name):
                    open(name, "w").close()
                    os.chmod(name, 0o755)
                    return name
                dfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
                attempt("os.chmod 4755", lambda: os.chmod(new("a1"), 0o4755))
                attempt("os.chmod 2755", lambda: os.chmod(new("a2"), 0o2755))
                attempt("os.fchmod 6755", lambda: os.fchmod(os.open(new("a3"), os.O_RDONLY), 0o6755))
                attempt("os.chmod dir_fd 4755", lambda: os.chmod(new("a4"), 0o4755, dir_fd=dfd))
                attempt("os.open O_CREAT 4755", lambda: os.close(os.open("a5", os.O_CREAT | os.O_WRONLY, 0o4755)))
                def tmpfile():
                    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755)
                    if libc.linkat(AT_FDCWD, b"/proc/self/fd/%d" % fd, AT_FDCWD, b"a6", 0x400) < 0:  # AT_SYMLINK_FOLLOW
                        raise OSError(ctypes.get_errno(), "linkat")
                attempt("os.open O_TMPFILE 4755", tmpfile)
                attempt("os.mknod 4755", lambda: os.mknod("a7", stat.S_IFREG | 0o4755))
                attempt("os.mknod dir_fd 2755", lambda: os.mknod("a8", stat.S_IFREG | 0o2755, dir_fd=dfd))
                for call in ["chmod", "fchmod", "fchmodat", "fchmodat2", "open", "openat", "creat", "mknod",
                             "mknodat", "openat2"]:
                    if call not in nr:
                        print("raw", call, "absent on this arch")
                        continue
                    name = ("r-" + call).encode()
                    if call == "chmod":
                        raw(call, new(name.decode()).encode(), 0o4755)
                    elif call == "fchmod":
                        raw(call, os.open(new(name.decode()), os.O_RDONLY), 0o6755)
                    elif call in ("fchmodat", "fchmodat2"):
                        raw(call, AT_FDCWD, new(name.decode()).encode(), 0o4755, 0)
                    elif call == "open":
                        raw(call, name, os.O_CREAT | os.O_WRONLY, 0o4755)
                    elif call == "openat":
                        raw(call, AT_FDCWD, name, os.O_CREAT | os.O_WRONLY, 0o2755)
                    elif call == "creat":
                        raw(call, name, 0o4755)
                    elif call == "mknod":
                        raw(call, name, stat.S_IFREG | 0o4755, 0)
                    elif call == "mknodat":
                        raw(call, AT_FDCWD, name, stat.S_IFREG | 0o4755, 0)
                    elif call == "openat2":
                        how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
                        raw(call, AT_FDCWD, name, how, 24)
                attempt("os.mkdir 6777", lambda: os.mkdir("d1", 0o6777))
                for entry in sorted(os.listdir(".")):
                    mode = os.lstat(entry).st_mode
                    if mode & (stat.S_ISUID | stat.S_ISGID) and not stat.S_ISDIR(mode):
                        print("SETID", entry, oct(mode & 0o7777))
                """);
        Fixture.Run r = f.run(f.spec("python3 setid.py; echo python=$?;"
                + " touch s1 s2 s3; chmod 6755 s1; echo chmod=$?; chmod u+s s2; echo us=$?; chmod g+s s3; echo gs=$?;"
                + " install -m 4755 /bin/true s4; echo install=$?; cp --preserve=mode " + tool + " s5; echo cp=$?;"
                + " cp -a " + tool + " s6; echo cpa=$?; mkdir t && tar -xpf " + ro.resolve("suid.tar") + " -C t;"
                + " echo tar=$?; stat -c '%a %n' s1 s2 s3 s4 s5 s6 t/suid-tool")
                .readOnly(ro).build(), new byte[0]);
        String out = r.out();
        assertThat(out).as(r.err()).contains("python=0").doesNotContain("SETID");
        for (String blocked : new String[] {"os.chmod 4755", "os.chmod 2755", "os.fchmod 6755", "os.chmod dir_fd 4755",
            "os.open O_CREAT 4755", "os.open O_TMPFILE 4755", "os.mknod 4755", "os.mknod dir_fd 2755",
            "raw fchmod", "raw fchmodat", "raw fchmodat2", "raw openat", "raw mknodat"}) {
            assertThat(out).contains(blocked + " blocked errno 1");
        }
        if (out.contains("raw chmod ")) {   // x86_64 has the old calls too
            assertThat(out).contains("raw chmod blocked errno 1", "raw open blocked errno 1", "raw creat blocked errno 1",
                    "raw mknod blocked errno 1");
        }
        assertThat(out).contains("raw openat2 blocked errno 38", "os.mkdir 6777 done");
        assertThat(out).contains("chmod=1", "us=1", "gs=1", "install=1", "tar=2")
                .containsPattern("\n[0-7]{3} s1\n[0-7]{3} s2\n[0-7]{3} s3\n[0-7]{3} s4\n[0-7]{3} s5\n[0-7]{3} s6\n"
                        + "[0-7]{3} t/suid-tool\n"); // three digits: no set-id (or sticky) digit in front
        assertThat(r.err()).contains("Operation not permitted");
        assertThat(setIdFiles(f.workspace)).isEmpty();
        assertThat(r.notices()).as("nothing got past the filter for the check after the run").isEmpty();
    }

    @Test
    void aSetuidFileThatWasThereBeforeCannotBeRewrittenOrRemoved(Fixture f) throws Exception {
        Path tool = f.write("bin/tool", "#!/bin/sh\necho original\n");
        chmod(tool, 04755);
        f.script("mmap.py", """
                import mmap, os
                for flags in [os.O_RDWR, os.O_WRONLY | os.O_TRUNC]:
                    try:
                        fd = os.open("bin/tool", flags)
                        m = mmap.mmap(fd, 0) if flags == os.O_RDWR else None
                        print("opened for writing", flags)
                    except OSError as e:
                        print("write open blocked:", e.strerror)
                """);
        Fixture.Run r = f.run("python3 mmap.py; echo 'echo evil' >> bin/tool; echo append=$?; rm -f bin/tool; echo rm=$?;"
                + " mv bin/tool bin/t2; echo mv=$?; chmod 755 bin/tool; echo chmod=$?");
        assertThat(r.out()).doesNotContain("opened for writing").contains("write open blocked: Read-only file system")
                .contains("append=2", "rm=1", "mv=1", "chmod=1");
        assertThat(tool).hasContent("#!/bin/sh\necho original");
        assertThat(mode(tool)).isEqualTo(04755);
        assertThat(r.notices()).isEmpty();
    }

    @Test
    void aSetIdBitThatAppearsDuringTheRunIsRemovedAfterItAndReported(Fixture f) throws Exception {
        // Stands in for a way past the filter: while the command waits, a set-id file appears in the workspace.
        RunningSandbox sandbox = ProcessSandbox.start(f.spec("echo ready; read line; echo done").build(), Stdio.pipes());
        Path late = f.workspace.resolve("late-tool");
        try (BufferedReader out = sandbox.process().inputReader(StandardCharsets.UTF_8)) {
            CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> Fixture.readLine(out));
            assertThat(ready.get(60, TimeUnit.SECONDS)).isEqualTo("ready");
            Files.writeString(late, "#!/bin/sh\n");
            chmod(late, 06755);
            sandbox.process().getOutputStream().write('\n');
            sandbox.process().getOutputStream().close();
            assertThat(sandbox.waitFor(Fixture.TIMEOUT)).hasValue(0);
        } finally {
            sandbox.close();
        }
        assertThat(mode(late)).isEqualTo(0755);
        assertThat(sandbox.notices()).singleElement().asString()
                .isEqualTo(late + ": set-user-ID/set-group-ID bit set in the sandbox: removed (mode 6755 is now 0755)");
    }

    static void chmod(Path file, int mode) throws IOException {
        Files.setAttribute(file, "unix:mode", mode);
    }

    static int mode(Path file) throws IOException {
        return (Integer) Files.getAttribute(file, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    static List<Path> setIdFiles(Path root) throws IOException {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : all.toList()) {
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && (mode(p) & 06000) != 0) {
                    found.add(p);
                }
            }
        }
        return found;
    }
}
