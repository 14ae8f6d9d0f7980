#!/usr/bin/env bash
# The image's root file system with the application (/app/sallyport.jar), built from what is on this machine (no
# registry, no daemon): a runtime cut by jlink from the build's JDK to the modules the CLI uses, the C library
# and libgcc_s from this machine's Debian packages (libc6, libgcc-s1: the JVM needs nothing else), /etc entries
# for the unprivileged user 65532, empty mount points for the state volume, /tmp and the policy, and the
# start-up cache trained on all of it.
#   build-root.sh OUT_DIR CLI_JAR
set -euo pipefail
out=$1 jar=$2
[ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/jlink" ] \
  || { echo "build-root.sh: JAVA_HOME has no bin/jlink (expected: a JDK 25)" >&2; exit 1; }
[ -f "$jar" ] || { echo "build-root.sh: $jar missing (expected: the CLI's shaded jar, built by the reactor first)" >&2; exit 1; }
command -v dpkg-query >/dev/null \
  || { echo "build-root.sh: dpkg-query missing (expected: a Debian or Ubuntu build machine: the C library comes from its packages)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"/{app,opt,etc,tmp,var/lib/sallyport,etc/sallyport}
cp "$jar" "$out/app/sallyport.jar"
# The modules the CLI uses (jdeps cannot read the shaded jar, whose module descriptors name the jars it merged):
# jdk.unsupported is Netty's sun.misc.Unsafe, jdk.naming.dns JNDI DNS, jdk.management the JVM metrics. The image
# test starts the proxy on this runtime and asks it for /readyz, so a module missing here fails the build.
modules=java.base,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec
modules=$modules,jdk.management,jdk.naming.dns,jdk.unsupported
"$JAVA_HOME/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --compress=zip-6 --output "$out/opt/java"
# the shared objects of the packages the runtime links against, with their symbolic links
for pkg in libc6 libgcc-s1; do
  dpkg-query -L "$pkg" | grep -E '^/(usr/)?lib(64|/x86_64-linux-gnu)?/[^/]+\.so(\.[0-9.]+)?$' | while read -r f; do
    [ -e "$f" ] || continue
    mkdir -p "$out$(dirname "$f")"
    cp -a "$f" "$out$f"
  done
done
# Debian's merged /usr: /lib and /lib64 are links into /usr there; the same here
for l in lib lib64; do
  if [ -L "/$l" ] && [ ! -e "$out/$l" ]; then ln -s "usr/$l" "$out/$l"; fi
done
[ -e "$out/lib64/ld-linux-x86-64.so.2" ] \
  || { echo "build-root.sh: no /lib64/ld-linux-x86-64.so.2 copied from libc6 (expected: an x86-64 Debian machine)" >&2; exit 1; }
cat > "$out/etc/passwd" <<'PW'
root:x:0:0:root:/nonexistent:/sbin/nologin
sallyport:x:65532:65532:sallyport:/var/lib/sallyport:/sbin/nologin
PW
cat > "$out/etc/group" <<'GR'
root:x:0:
sallyport:x:65532:
GR
echo "hosts: files dns" > "$out/etc/nsswitch.conf"
# The JDK's ahead-of-time cache (JEP 483/514), trained here by a short proxy run on loopback
# (dev.sallyport.cli.AotTraining) with the image's own runtime, jar and JVM options (jvm-options, and the heap
# the image's JDK_JAVA_OPTIONS sets). The cache checks the jar and
# the runtime by size and modification time, not path: everything gets the time Jib gives every file it
# layers (one second after the epoch) before the training, so the image's copies are the trained ones.
cp "$(dirname "$0")/jvm-options" "$out/app/jvm-options"    # the entrypoint's options (a java @-file)
find "$out" -exec touch -h -d @1 {} +
JDK_JAVA_OPTIONS=-Xmx128m "$out/opt/java/bin/java" @"$out/app/jvm-options" -XX:AOTCacheOutput="$out/app/sallyport.aot" \
  -cp "$out/app/sallyport.jar" dev.sallyport.cli.AotTraining > "$out.aot.log" 2>&1 \
  || { echo "build-root.sh: AOT training failed (expected: a proxy run on loopback); its output:" >&2; cat "$out.aot.log" >&2; exit 1; }
[ -f "$out/app/sallyport.aot" ] || { echo "build-root.sh: no AOT cache written; see $out.aot.log" >&2; exit 1; }
touch -d @1 "$out/app/sallyport.aot"
echo "build-root.sh: $out: modules $modules; $(du -sh "$out" | cut -f1)"
