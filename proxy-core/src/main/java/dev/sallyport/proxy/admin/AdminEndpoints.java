package dev.sallyport.proxy.admin;

import dev.sallyport.proxy.reload.ReloadResult;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the admin listener serves: the metrics text, a reload, why the proxy is not ready (empty when it
 * is), and the sandbox registrations (null: none served). {@code token} null means {@code POST /reload} and
 * {@code /sandboxes} are refused.
 */
record AdminEndpoints(Supplier<String> scrape, Supplier<ReloadResult> reload, Supplier<Optional<String>> notReady,
                      AdminToken token, SandboxEndpoints sandboxes) {

    AdminEndpoints(Supplier<String> scrape, Supplier<ReloadResult> reload, Supplier<Optional<String>> notReady,
                   AdminToken token) {
        this(scrape, reload, notReady, token, null);
    }
}
