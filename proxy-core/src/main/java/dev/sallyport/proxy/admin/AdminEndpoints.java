package dev.sallyport.proxy.admin;

import dev.sallyport.proxy.reload.ReloadResult;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the admin listener serves: the metrics text, a reload, and why the proxy is not ready (empty when it
 * is). {@code token} null means {@code POST /reload} is refused.
 */
record AdminEndpoints(Supplier<String> scrape, Supplier<ReloadResult> reload, Supplier<Optional<String>> notReady,
                      AdminToken token) {}
