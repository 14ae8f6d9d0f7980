package dev.sallyport.sandbox.net;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * nerdctl's CNI network configuration list for one sandbox network: which file it is and which bridge it names
 * (read from {@code nerdctl network inspect --mode=native}), and the routes the runner adds to its bridge plugin's
 * IPAM before any container starts.
 *
 * <p>Why the routes: for {@code --internal}, nerdctl writes the bridge plugin without {@code isGateway} and the
 * host-local IPAM without {@code routes}, so the guest's only route is its own subnet and a TCP connection to a
 * synthetic address fails in the guest ("network unreachable") before the host's table could capture it. CNI's bridge
 * plugin puts the IPAM result's routes on the container's interface whether or not it is the gateway, and Kata copies
 * the namespace's routes into the VM; {@code isGateway} stays off, so CNI still leaves the host's {@code ip_forward}
 * alone and gives the guest no default route of its own.
 *
 * <p>The file is rewritten with everything else in it kept (keys in their order, numbers as written), to a temporary
 * file in the same folder (a name CNI does not load: it ends in {@value #TEMP_SUFFIX}) with the original's mode and
 * owner, then renamed over the original. Anything unexpected (no file, not JSON, another network's file, no bridge
 * plugin or no IPAM) is one error line naming the file, what was found and what was expected.
 */
public final class CniConflist {

    /** What a temporary file written next to a conflist ends in (not {@code .conf}, {@code .conflist}, {@code .json}). */
    public static final String TEMP_SUFFIX = ".sallyport-tmp";

    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    /** One IPAM route: destination CIDR and next hop. */
    public record Route(String dst, String gw) {
        public Route {
            int slash = dst.indexOf('/');
            String bits = slash < 0 ? "" : dst.substring(slash + 1);
            if (slash < 0 || !bits.matches("[0-9]{1,2}") || Integer.parseInt(bits) > 32) {
                throw new IllegalArgumentException("dst: '" + dst + "' (expected: a.b.c.d/0..32)");
            }
            Ipv4Subnet.parseAddress(dst.substring(0, slash));
            Ipv4Subnet.parseAddress(gw);
        }
    }

    /**
     * What {@code nerdctl network inspect --mode=native} says about the network.
     *
     * @param file   the conflist nerdctl wrote (its {@code File}; in rootless mode or with {@code --cni-netconfpath}
     *               or a namespace it is not under {@code /etc/cni/net.d})
     * @param bridge the bridge plugin's {@code bridge}, or {@code "(none)"}
     */
    public record Inspected(Path file, String bridge) {
    }

    private CniConflist() {
    }

    /** Reads {@code output} of {@code nerdctl network inspect --mode=native NAME} for the network {@code name}. */
    public static Inspected inspected(String output, String name) throws IOException {
        String where = "nerdctl network inspect --mode=native " + name;
        Object root = read(output.getBytes(java.nio.charset.StandardCharsets.UTF_8), where);
        if (!(root instanceof List<?> networks) || networks.size() != 1
                || !(networks.getFirst() instanceof Map<?, ?> network)) {
            throw new IOException(where + ": " + shape(root)
                    + " (expected: a JSON array holding one network, as nerdctl >= 2.1.4 prints)");
        }
        if (!(network.get("File") instanceof String file) || !Path.of(file).isAbsolute()) {
            throw new IOException(where + ": File: " + shape(network.get("File"))
                    + " (expected: the absolute path of the network's conflist)");
        }
        String bridge = network.get("CNI") instanceof Map<?, ?> cni && bridgePlugin(cni) instanceof Map<?, ?> plugin
                && plugin.get("bridge") instanceof String named ? named : "(none)";
        return new Inspected(Path.of(file), bridge);
    }

    /**
     * Adds {@code routes} to the IPAM of the bridge plugin in {@code file}, the conflist of network {@code name}:
     * after the routes already there, leaving out any that is there already (a rerun changes nothing).
     */
    public static void addRoutes(Path file, String name, List<Route> routes) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(file + ": " + (Files.exists(file, LinkOption.NOFOLLOW_LINKS) ? "not a regular file"
                    : "missing") + " (expected: the conflist 'nerdctl network create' wrote for " + name + ")");
        }
        Object root = read(Files.readAllBytes(file), file.toString());
        if (!(root instanceof Map<?, ?> conflist) || !name.equals(conflist.get("name"))) {
            throw new IOException(file + ": name: " + (root instanceof Map<?, ?> m ? shape(m.get("name")) : shape(root))
                    + " (expected: a conflist named '" + name + "')");
        }
        if (!(bridgePlugin(conflist) instanceof Map<?, ?> bridge)) {
            throw new IOException(file + ": plugins: no plugin of type 'bridge' (expected: the bridge plugin nerdctl "
                    + "writes for a bridge network)");
        }
        if (!(bridge.get("ipam") instanceof Map<?, ?> ipam) || !"host-local".equals(ipam.get("type"))) {
            throw new IOException(file + ": the bridge plugin's ipam: " + shape(bridge.get("ipam"))
                    + " (expected: an object of type 'host-local', as nerdctl writes it)");
        }
        Object present = ipam.get("routes");
        if (present != null && !(present instanceof List<?>)) {
            throw new IOException(file + ": the bridge plugin's ipam.routes: " + shape(present)
                    + " (expected: an array of routes)");
        }
        List<Object> merged = new ArrayList<>(present == null ? List.of() : (List<?>) present);
        for (Route route : routes) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("dst", route.dst());
            entry.put("gw", route.gw());
            if (!merged.contains(entry)) {
                merged.add(entry);
            }
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> writable = (Map<String, Object>) ipam;
        writable.put("routes", merged);
        replace(file, write(root));
    }

    /** The first plugin of type {@code bridge} in a conflist's {@code plugins}, or null. */
    private static /* @Nullable */ Object bridgePlugin(Map<?, ?> conflist) {
        if (conflist.get("plugins") instanceof List<?> plugins) {
            for (Object plugin : plugins) {
                if (plugin instanceof Map<?, ?> p && "bridge".equals(p.get("type"))) {
                    return p;
                }
            }
        }
        return null;
    }

    /** Writes {@code bytes} to a temporary file beside {@code file} with its mode and owner, then renames it over. */
    private static void replace(Path file, byte[] bytes) throws IOException {
        PosixFileAttributes before = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        Path temp = Files.createTempFile(file.toAbsolutePath().getParent(), "." + file.getFileName() + ".",
                TEMP_SUFFIX);
        try {
            PosixFileAttributeView view = Files.getFileAttributeView(temp, PosixFileAttributeView.class);
            if (!view.readAttributes().owner().equals(before.owner())) {
                view.setOwner(before.owner());
            }
            if (!view.readAttributes().group().equals(before.group())) {
                view.setGroup(before.group());
            }
            view.setPermissions(before.permissions());
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                channel.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** A JSON number kept as written. */
    private record RawNumber(String text) {
        @Override
        public String toString() {
            return text;
        }
    }

    /** Parses one JSON value into maps (in key order), lists, strings, {@link RawNumber}s, booleans and nulls. */
    private static /* @Nullable */ Object read(byte[] json, String where) throws IOException {
        try (JsonParser parser = JSON.createParser(json)) {
            if (parser.nextToken() == null) {
                throw new IOException(where + ": empty (expected: JSON)");
            }
            Object value = value(parser);
            if (parser.nextToken() != null) {
                throw new IOException(where + ": text after the JSON value at line "
                        + parser.currentTokenLocation().getLineNr() + " (expected: one JSON value)");
            }
            return value;
        } catch (JsonProcessingException e) {
            throw new IOException(where + ": not valid JSON: " + e.getOriginalMessage().lines().findFirst().orElse("")
                    + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + " column "
                    + e.getLocation().getColumnNr()) + " (expected: a CNI conflist as nerdctl writes it)", e);
        }
    }

    private static /* @Nullable */ Object value(JsonParser parser) throws IOException {
        JsonToken token = parser.currentToken();
        return switch (token) {
            case START_OBJECT -> {
                Map<String, Object> object = new LinkedHashMap<>();
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String key = parser.currentName();
                    parser.nextToken();
                    object.put(key, value(parser));
                }
                yield object;
            }
            case START_ARRAY -> {
                List<Object> array = new ArrayList<>();
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    array.add(value(parser));
                }
                yield array;
            }
            case VALUE_STRING -> parser.getText();
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> new RawNumber(parser.getText());
            case VALUE_TRUE -> true;
            case VALUE_FALSE -> false;
            case VALUE_NULL -> null;
            default -> throw new IOException("unexpected JSON token " + token);
        };
    }

    /** Pretty-prints {@code value} as nerdctl does (two spaces, {@code "key": value}), with a final newline. */
    private static byte[] write(/* @Nullable */ Object value) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
        try (JsonGenerator generator = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            generator.setPrettyPrinter(new DefaultPrettyPrinter()
                    .withSeparators(Separators.createDefaultInstance()
                            .withObjectFieldValueSpacing(Separators.Spacing.AFTER))
                    .withObjectIndenter(indenter).withArrayIndenter(indenter));
            write(generator, value);
        }
        out.write('\n');
        return out.toByteArray();
    }

    private static void write(JsonGenerator generator, /* @Nullable */ Object value) throws IOException {
        switch (value) {
            case null -> generator.writeNull();
            case Map<?, ?> object -> {
                generator.writeStartObject();
                for (Map.Entry<?, ?> entry : object.entrySet()) {
                    generator.writeFieldName((String) entry.getKey());
                    write(generator, entry.getValue());
                }
                generator.writeEndObject();
            }
            case List<?> array -> {
                generator.writeStartArray();
                for (Object element : array) {
                    write(generator, element);
                }
                generator.writeEndArray();
            }
            case String text -> generator.writeString(text);
            case RawNumber number -> generator.writeNumber(number.text());
            case Boolean bool -> generator.writeBoolean(bool);
            default -> throw new IllegalStateException("not a JSON value: " + value.getClass());
        }
    }

    /** A short description of what was found, for error lines. */
    private static String shape(/* @Nullable */ Object value) {
        return switch (value) {
            case null -> "absent or null";
            case Map<?, ?> object -> "an object";
            case List<?> array -> "an array of " + array.size();
            case String text -> "'" + (text.length() > 80 ? text.substring(0, 80) + "..." : text) + "'";
            default -> Objects.toString(value);
        };
    }
}
