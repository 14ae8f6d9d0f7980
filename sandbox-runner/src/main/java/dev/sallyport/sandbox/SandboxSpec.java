package dev.sallyport.sandbox;

import dev.sallyport.sandbox.internal.PackageCaches;
import dev.sallyport.policy.LiteralAddresses;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What to run in the process sandbox and what it may see.
 *
 * @param command          the command and its arguments (non-empty; resolved on the sandbox's PATH)
 * @param workdir          the workspace: the only host folder the command may write (besides {@code readWrite})
 * @param proxy            the running proxy on the host's loopback; inside it is {@code 127.0.0.1:}{@link #insidePort}
 * @param caPem            the proxy CA certificate(s), PEM; trusted inside next to the system roots
 * @param passEnv          host variables passed through by name (absent ones are skipped)
 * @param placeholders     secret name to placeholder, set in the environment under the secret's name
 * @param readOnly         extra host paths visible read-only (e.g. a tool cache); under the home folder too
 * @param readWrite        extra host paths writable (e.g. {@code ~/.npm})
 * @param scratch          host folders shown with their contents and writable inside, every change thrown away after
 *                         the run (e.g. {@code ~/.config/opencode}, which a tool must write to start); checked and
 *                         mounted by {@link ScratchFolders}
 * @param requireLandlock  fail closed unless the kernel enforces every protection: Landlock's file-system and TCP
 *                         rules (ABI >= 4) and host unix sockets kept out (ABI >= 9, or the connect supervisor)
 * @param gitWritable      let the command write {@code .git} (commit; the default); hooks and config stay read-only
 *                         anyway, in nested repositories too
 * @param hostHome         the host's home folder, hidden inside (an empty tmpfs at the same path is HOME)
 * @param hostEnv          the host environment that {@code passEnv}, TERM and LANG are read from
 * @param insidePort       the TCP port inside the sandbox where the proxy answers
 * @param limits           memory, tasks, tmpfs sizes and inotify budget ({@link ResourceLimits#defaults()})
 * @param packageCaches    this workspace's package cache folder on the host, shown writable at the package managers'
 *                         cache locations in the home folder ({@code ~/.m2/repository}, {@code ~/.npm}, ...); empty:
 *                         every run starts with empty caches
 * @param capture          transparent capture: the proxy's DNS stub (TCP) and transparent listener on the host's
 *                         loopback, where the sandbox's DNS and its connections to synthetic addresses are relayed;
 *                         empty: only clients that use the proxy variables get out
 * @param identityToken    the token of the sandbox's registration with a shared proxy: the relay presents it on
 *                         every connection it makes for the sandbox (never shown inside); empty: anonymous
 * @param startupCache     a folder of the runner's own (in its state folder) where the set-up keeps what it
 *                         computed for the next run: the Java trust store, the record of the grants' folders that
 *                         spares the next walk for socket files (each checked before use); empty: none
 * @param hold             tool-config names held back after the run besides the built-in table (the policy's
 *                         {@code sandbox.hold})
 * @param heldStore        where what was held back is kept ({@link Held}), out of the sandbox's reach
 */
public record SandboxSpec(List<String> command, Path workdir, InetSocketAddress proxy, byte[] caPem,
                          List<String> passEnv, Map<String, String> placeholders, List<Path> readOnly,
                          List<Path> readWrite, List<Path> scratch, boolean requireLandlock, boolean gitWritable,
                          Path hostHome, Map<String, String> hostEnv, int insidePort, ResourceLimits limits,
                          Optional<Path> packageCaches, Optional<Capture> capture, Optional<String> identityToken,
                          Optional<Path> startupCache, List<String> hold, Path heldStore) {
    /** The inside port used unless told otherwise. */
    public static final int DEFAULT_INSIDE_PORT = 3128;
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public SandboxSpec {
        Objects.requireNonNull(command, "command");
        if (command.isEmpty() || command.getFirst().isEmpty()) {
            throw new IllegalArgumentException("command: empty (expected: a program and its arguments)");
        }
        command = List.copyOf(command);
        workdir = Objects.requireNonNull(workdir, "workdir").toAbsolutePath().normalize();
        Objects.requireNonNull(proxy, "proxy");
        if (proxy.isUnresolved() || !proxy.getAddress().isLoopbackAddress()) {
            throw new IllegalArgumentException("proxy: " + proxy + " (expected: an address on the host's loopback)");
        }
        caPem = Objects.requireNonNull(caPem, "caPem").clone();
        passEnv = List.copyOf(passEnv);
        for (String name : passEnv) {
            checkEnvName("passEnv", name);
        }
        placeholders = Map.copyOf(placeholders);
        for (String name : placeholders.keySet()) {
            checkEnvName("placeholders", name);
            if (passEnv.contains(name)) {
                throw new IllegalArgumentException("passEnv: " + name + " is a secret (expected: secrets reach the "
                        + "sandbox only as placeholders, never passed through from the host)");
            }
        }
        readOnly = absolute(readOnly);
        readWrite = absolute(readWrite);
        scratch = absolute(scratch);
        hostHome = Objects.requireNonNull(hostHome, "hostHome").toAbsolutePath().normalize();
        hostEnv = Map.copyOf(hostEnv);
        if (insidePort < 1 || insidePort > 65535) {
            throw new IllegalArgumentException("insidePort: " + insidePort + " (expected: 1..65535)");
        }
        Objects.requireNonNull(limits, "limits");
        packageCaches = packageCaches.map(p -> p.toAbsolutePath().normalize());
        Objects.requireNonNull(capture, "capture");
        Objects.requireNonNull(identityToken, "identityToken");
        startupCache = startupCache.map(p -> p.toAbsolutePath().normalize());
        hold = List.copyOf(hold);
        hold.forEach(dev.sallyport.policy.SandboxSettings::checkHold);
        heldStore = Objects.requireNonNull(heldStore, "heldStore").toAbsolutePath().normalize();
        if (heldStore.startsWith(workdir)) {
            throw new IllegalArgumentException("heldStore: " + heldStore + " is inside the workspace (expected: a "
                    + "folder the command cannot write)");
        }
    }

    /**
     * Where the proxy's DNS stub (over TCP) and transparent listener answer, both on the host's loopback, and whether
     * connections to literal addresses are captured too ({@code literals}, the policy's
     * {@code network.literal_addresses}).
     */
    public record Capture(InetSocketAddress dns, InetSocketAddress transparent, LiteralAddresses literals) {
        public Capture {
            for (InetSocketAddress a : List.of(dns, transparent)) {
                if (a.isUnresolved() || !a.getAddress().isLoopbackAddress()) {
                    throw new IllegalArgumentException("capture: " + a + " (expected: an address on the host's "
                            + "loopback)");
                }
            }
            Objects.requireNonNull(literals, "literals");
        }

        /** Only the DNS stub's synthetic addresses captured; literal addresses have no route. */
        public Capture(InetSocketAddress dns, InetSocketAddress transparent) {
            this(dns, transparent, LiteralAddresses.NO_ROUTE);
        }
    }

    @Override
    public byte[] caPem() {
        return caPem.clone();
    }

    /**
     * A spec with defaults: the user's home and environment, nothing passed through, no grants, .git writable but
     * for its hooks and config, what was held back kept under the state directory.
     */
    public static Builder builder(List<String> command, Path workdir, InetSocketAddress proxy, byte[] caPem) {
        return new Builder(command, workdir, proxy, caPem);
    }

    @Override
    public String toString() {
        return "SandboxSpec[command=" + command + ", workdir=" + workdir + ", proxy=" + proxy + ", caPem="
                + caPem.length + " bytes, passEnv=" + passEnv + ", secrets=" + placeholders.keySet() + ", readOnly="
                + readOnly + ", readWrite=" + readWrite + ", scratch=" + scratch + ", requireLandlock=" + requireLandlock
                + ", gitWritable=" + gitWritable + ", hostHome=" + hostHome + ", insidePort=" + insidePort + ", limits="
                + limits + ", packageCaches=" + packageCaches + ", capture=" + capture + ", identityToken="
                + (identityToken.isPresent() ? "hidden" : "none") + ", startupCache=" + startupCache + ", hold=" + hold
                + ", heldStore=" + heldStore + "]";
    }

    private static void checkEnvName(String field, String name) {
        if (!ENV_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(field + ": '" + name + "' is not a variable name (expected: "
                    + "[A-Za-z_][A-Za-z0-9_]*)");
        }
    }

    private static List<Path> absolute(List<Path> paths) {
        List<Path> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(p.toAbsolutePath().normalize());
        }
        return List.copyOf(out);
    }

    /** Builds a {@link SandboxSpec}. */
    public static final class Builder {
        private final List<String> command;
        private final Path workdir;
        private final InetSocketAddress proxy;
        private final byte[] caPem;
        private final List<String> passEnv = new ArrayList<>();
        private final Map<String, String> placeholders = new LinkedHashMap<>();
        private final List<Path> readOnly = new ArrayList<>();
        private final List<Path> readWrite = new ArrayList<>();
        private final List<Path> scratch = new ArrayList<>();
        private boolean requireLandlock;
        private boolean gitWritable = true;
        private final List<String> hold = new ArrayList<>();
        private Path heldStore;
        private Path hostHome = Path.of(System.getProperty("user.home"));
        private Map<String, String> hostEnv = System.getenv();
        private int insidePort = DEFAULT_INSIDE_PORT;
        private ResourceLimits limits;
        private Path cacheState;
        private Capture capture;
        private String identityToken;
        private Path startupCache;

        private Builder(List<String> command, Path workdir, InetSocketAddress proxy, byte[] caPem) {
            this.command = command;
            this.workdir = workdir;
            this.proxy = proxy;
            this.caPem = caPem;
        }

        public Builder passEnv(String name) {
            passEnv.add(name);
            return this;
        }

        public Builder placeholder(String secretName, String placeholder) {
            placeholders.put(secretName, placeholder);
            return this;
        }

        public Builder readOnly(Path path) {
            readOnly.add(path);
            return this;
        }

        public Builder readWrite(Path path) {
            readWrite.add(path);
            return this;
        }

        /**
         * Shows the host folder {@code path} writable inside, its changes thrown away after the run (an overlay, or a
         * copy where bwrap cannot make one); see {@link ScratchFolders}.
         */
        public Builder scratch(Path path) {
            scratch.add(path);
            return this;
        }

        public Builder requireLandlock(boolean require) {
            this.requireLandlock = require;
            return this;
        }

        public Builder gitWritable(boolean writable) {
            this.gitWritable = writable;
            return this;
        }

        public Builder hostHome(Path home) {
            this.hostHome = home;
            return this;
        }

        public Builder hostEnv(Map<String, String> env) {
            this.hostEnv = env;
            return this;
        }

        public Builder insidePort(int port) {
            this.insidePort = port;
            return this;
        }

        public Builder limits(ResourceLimits resourceLimits) {
            this.limits = resourceLimits;
            return this;
        }

        /**
         * Keeps package caches between runs of this workspace: in a folder of its own under
         * {@code stateDirectory/caches/} (named after the workspace and a hash of its path), outside the workspace.
         */
        public Builder packageCaches(Path stateDirectory) {
            this.cacheState = stateDirectory;
            return this;
        }

        /** Turns on transparent capture through the proxy's DNS stub and transparent listener. */
        public Builder capture(Capture value) {
            this.capture = value;
            return this;
        }

        /** Presents {@code token} (a registration's, see {@link SandboxRun.ProxyMode.Attached}) on every connection. */
        public Builder identityToken(String token) {
            this.identityToken = token;
            return this;
        }

        /** Keeps the set-up's start-up caches in {@code folder} (see {@link SandboxSpec#startupCache()}). */
        public Builder startupCache(Path folder) {
            this.startupCache = folder;
            return this;
        }

        /** Holds back files named {@code name} too (see {@link SandboxSpec#hold()}). */
        public Builder hold(String name) {
            hold.add(name);
            return this;
        }

        /** Keeps what was held back in {@code folder} (default: the state directory's {@value Held#FOLDER}). */
        public Builder heldStore(Path folder) {
            this.heldStore = folder;
            return this;
        }

        public SandboxSpec build() {
            return new SandboxSpec(command, workdir, proxy, caPem, passEnv, placeholders, readOnly, readWrite,
                    scratch, requireLandlock, gitWritable, hostHome, hostEnv, insidePort,
                    limits != null ? limits : ResourceLimits.defaults(),
                    Optional.ofNullable(cacheState).map(state -> PackageCaches.folder(state, workdir)),
                    Optional.ofNullable(capture), Optional.ofNullable(identityToken), Optional.ofNullable(startupCache),
                    hold, heldStore != null ? heldStore
                            : dev.sallyport.policy.StateDirectory.resolve().resolve(Held.FOLDER));
        }
    }
}
