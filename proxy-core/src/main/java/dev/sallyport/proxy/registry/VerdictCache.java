package dev.sallyport.proxy.registry;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sallyport.policy.Registry;
import java.time.Duration;
import java.util.Map;

/**
 * The verdicts of the package documents filtered lately, per registry entry and package, for the files asked for
 * afterwards ({@code npm ci} from a lockfile asks for tarballs alone). Keyed by the {@link Registry} entry itself, so
 * a reload (new entries, new advisories) starts afresh; entries expire after a few minutes, since a version too new
 * now is old enough later.
 */
public final class VerdictCache {

    /** How long a document's verdicts are used for its files. */
    public static final Duration TTL = Duration.ofMinutes(5);
    private static final int PACKAGES = 20_000;

    private final Cache<Registry, Cache<String, Map<String, String>>> byRegistry =
            Caffeine.newBuilder().weakKeys().build();

    /** The verdicts of {@code packageName}'s document (version to reason, {@code ""} allowed), or null. */
    public Map<String, String> get(Registry registry, String packageName) {
        Cache<String, Map<String, String>> c = byRegistry.getIfPresent(registry);
        return c == null ? null : c.getIfPresent(registry.ecosystem().normalize(packageName));
    }

    public void put(Registry registry, String packageName, Map<String, String> verdicts) {
        byRegistry.get(registry, r -> Caffeine.newBuilder().maximumSize(PACKAGES).expireAfterWrite(TTL).build())
                .put(registry.ecosystem().normalize(packageName), Map.copyOf(verdicts));
    }
}
