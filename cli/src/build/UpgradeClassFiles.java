import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassFileVersion;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.lang.constant.ClassDesc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * Run by the cli module's build after the shade step ({@code java UpgradeClassFiles.java JAR PREFIX...}): rewrites
 * the classes under each PREFIX in JAR from class file version 49 (Java 5, picocli's) to 52 (Java 8), with stack
 * maps computed by the JDK's class-file API and every method body re-emitted unchanged. The JDK's ahead-of-time
 * cache leaves out classes older than version 50 ("Unlinked class not supported by AOTClassLinking"), so without
 * this every start loaded and verified picocli's ~170 classes from the jar (about 0.1 s of a run's start). The
 * instructions, constants, names and attributes stay as they were; each rewritten class is checked by the
 * class-file API's verifier before the jar is replaced, and any error fails the build.
 */
public final class UpgradeClassFiles {
    private static final int OLDEST_KEPT = 50;
    private static final int TARGET = 52;

    private UpgradeClassFiles() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            throw new IllegalArgumentException("arguments: " + args.length + " (expected: JAR PREFIX...)");
        }
        Path jar = Path.of(args[0]);
        List<String> prefixes = List.of(args).subList(1, args.length);
        Map<String, byte[]> entries = new LinkedHashMap<>();
        Map<String, Long> times = new LinkedHashMap<>();
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(jar))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                entries.put(e.getName(), in.readAllBytes());
                times.put(e.getName(), e.getTime());
            }
        }
        ClassHierarchyResolver inJar = ClassHierarchyResolver.ofResourceParsing(
                (ClassDesc c) -> {
                    String d = c.descriptorString();
                    byte[] b = entries.get(d.substring(1, d.length() - 1) + ".class");
                    return b == null ? null : new ByteArrayInputStream(b);
                });
        ClassHierarchyResolver resolver = inJar.orElse(ClassHierarchyResolver.defaultResolver()).cached();
        ClassFile cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver),
                ClassFile.ConstantPoolSharingOption.NEW_POOL, ClassFile.StackMapsOption.GENERATE_STACK_MAPS);
        ClassTransform version = (builder, element) -> {
            if (element instanceof ClassFileVersion) {
                builder.withVersion(TARGET, 0);
            } else {
                builder.with(element);
            }
        };
        ClassTransform upgrade = version.andThen(ClassTransform.transformingMethodBodies(CodeTransform.ACCEPT_ALL));
        int upgraded = 0;
        StringBuilder errors = new StringBuilder();
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            String name = e.getKey();
            if (!name.endsWith(".class") || name.startsWith("META-INF/")
                    || prefixes.stream().noneMatch(name::startsWith)) {
                continue;
            }
            ClassModel model = cf.parse(e.getValue());
            if (model.majorVersion() >= OLDEST_KEPT) {
                continue;
            }
            byte[] rewritten = cf.transformClass(model, upgrade);
            cf.verify(rewritten).forEach(error -> errors.append(name).append(": ").append(error.getMessage())
                    .append('\n'));
            e.setValue(rewritten);
            upgraded++;
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("class files that do not verify after the upgrade:\n" + errors);
        }
        Path tmp = jar.resolveSibling(jar.getFileName() + ".upgrade.tmp");
        try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(tmp))) {
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                ZipEntry entry = new ZipEntry(e.getKey());
                entry.setTime(times.get(e.getKey()));
                out.putNextEntry(entry);
                out.write(e.getValue());
                out.closeEntry();
            }
        }
        Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("UpgradeClassFiles: " + upgraded + " classes under " + prefixes + " now version " + TARGET
                + " in " + jar);
    }
}
