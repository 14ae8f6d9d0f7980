package dev.sallyport.sandbox.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the host tells {@link Inside}: the command, its exact environment, the port to listen on, the host's unix
 * socket that the listener (and the seccomp listener, when {@code supervise}) is handed to, the Landlock rules, the
 * rlimits to set where no cgroup holds the sandbox (0: none), the highest Landlock ABI to use
 * ({@code landlockAbiCap}, lower than the kernel's only in tests), lines to print first ({@code notices}) and files
 * to copy before the command starts ({@code seeds}: source and target paths inside, in pairs; a target that exists
 * is left as it is), and whether transparent capture is on ({@code capture}: then the setup also makes the UDP
 * socket for DNS and the listener on {@code [::1]}, both on {@code port}).
 * Travels as a read-only file (not argv or environment, so the setup JVM's {@code /proc} entries show nothing but
 * the file's name).
 */
public record Launch(List<String> command, Map<String, String> env, String cwd, int port, String socket,
                     boolean requireLandlock, List<String> readPaths, List<String> writePaths,
                     List<String> devicePaths, long rlimitData, long rlimitTasks, boolean supervise,
                     int landlockAbiCap, List<String> notices, List<String> seeds, boolean capture) {
    private static final int MAGIC = 0x53504c33; // "SPL3"

    public Launch {
        command = List.copyOf(command);
        env = Map.copyOf(env);
        readPaths = List.copyOf(readPaths);
        writePaths = List.copyOf(writePaths);
        devicePaths = List.copyOf(devicePaths);
        notices = List.copyOf(notices);
        seeds = List.copyOf(seeds);
        if (seeds.size() % 2 != 0) {
            throw new IllegalArgumentException("seeds: " + seeds.size() + " paths (expected: source and target pairs)");
        }
        if (landlockAbiCap < 0) {
            throw new IllegalArgumentException("landlockAbiCap: " + landlockAbiCap + " (expected: >= 0)");
        }
    }

    public byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            writeList(out, command);
            out.writeInt(env.size());
            for (Map.Entry<String, String> e : new java.util.TreeMap<>(env).entrySet()) {
                writeString(out, e.getKey());
                writeString(out, e.getValue());
            }
            writeString(out, cwd);
            out.writeInt(port);
            writeString(out, socket);
            out.writeBoolean(requireLandlock);
            writeList(out, readPaths);
            writeList(out, writePaths);
            writeList(out, devicePaths);
            out.writeLong(rlimitData);
            out.writeLong(rlimitTasks);
            out.writeBoolean(supervise);
            out.writeInt(landlockAbiCap);
            writeList(out, notices);
            writeList(out, seeds);
            out.writeBoolean(capture);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bytes.toByteArray();
    }

    public static Launch decode(byte[] data) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
        if (in.readInt() != MAGIC) {
            throw new IOException("launch file: bad header (expected: a file written by this sallyport version)");
        }
        List<String> command = readList(in);
        int n = in.readInt();
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            env.put(readString(in), readString(in));
        }
        return new Launch(command, env, readString(in), in.readInt(), readString(in), in.readBoolean(),
                readList(in), readList(in), readList(in), in.readLong(), in.readLong(), in.readBoolean(), in.readInt(),
                readList(in), readList(in), in.readBoolean());
    }

    private static void writeList(DataOutputStream out, List<String> list) throws IOException {
        out.writeInt(list.size());
        for (String s : list) {
            writeString(out, s);
        }
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static List<String> readList(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > 100_000) {
            throw new IOException("launch file: list of " + n + " entries (expected: 0..100000)");
        }
        List<String> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(readString(in));
        }
        return list;
    }

    private static String readString(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > 16 << 20) {
            throw new IOException("launch file: string of " + n + " bytes (expected: 0..16 MiB)");
        }
        return new String(in.readNBytes(n), StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "Launch[command=" + command + ", env=" + env.keySet() + ", cwd=" + cwd + ", port=" + port + ", rlimitData=" + rlimitData
                + ", rlimitTasks=" + rlimitTasks + "]";
    }
}
