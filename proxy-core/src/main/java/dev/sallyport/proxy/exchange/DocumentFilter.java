package dev.sallyport.proxy.exchange;

import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.RegistryReasons;
import dev.sallyport.proxy.registry.FilteredDocument;
import dev.sallyport.proxy.registry.NpmDocument;
import dev.sallyport.proxy.registry.SimpleIndex;
import dev.sallyport.proxy.registry.UnreadableDocument;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.time.Instant;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The response half of the registry stage for one package document: the body is gathered (up to the entry's
 * {@code max_document_bytes}; beyond, refused), filtered off the event loop, and answered in the form the client
 * asked for. Memory per document in flight: the gathered body, one copy of it as an array, and the answer.
 */
final class DocumentFilter {

    /** The form of the answer. */
    enum Form { FULL, ABBREVIATED, HTML, TEXT_HTML }

    /** Filtering runs here, never on an event loop: a large document takes tens of milliseconds. */
    private static final ExecutorService FILTERS = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(256), r -> {
                Thread t = new Thread(r, "sallyport-registry-filter");
                t.setDaemon(true);
                return t;
            });

    private final Registry registry;
    private final String packageName;
    private final Form form;
    private CompositeByteBuf body;

    DocumentFilter(Registry registry, String packageName, Form form) {
        this.registry = registry;
        this.packageName = packageName;
        this.form = form;
    }

    Registry registry() {
        return registry;
    }

    String packageName() {
        return packageName;
    }

    /** Adds a part of the body (taking it over); false when the document grew past the bound (then released). */
    boolean append(ByteBufAllocator alloc, ByteBuf part) {
        if (body == null) {
            body = alloc.compositeBuffer(Integer.MAX_VALUE);
        }
        if ((long) body.readableBytes() + part.readableBytes() > registry.maxDocumentBytes()) {
            part.release();
            release();
            return false;
        }
        body.addComponent(true, part);
        return true;
    }

    /** Filters what was gathered, on the filter threads; fails with {@link UnreadableDocument}. */
    CompletableFuture<FilteredDocument> filter(Instant now) {
        byte[] bytes = new byte[body == null ? 0 : body.readableBytes()];
        if (body != null) {
            body.readBytes(bytes);
            release();
        }
        CompletableFuture<FilteredDocument> result = new CompletableFuture<>();
        try {
            FILTERS.execute(() -> {
                try {
                    result.complete(registry.ecosystem() == Ecosystem.NPM
                            ? NpmDocument.filter(bytes, registry, packageName, now, form == Form.ABBREVIATED)
                            : SimpleIndex.filter(bytes, registry, packageName, now, form == Form.HTML
                                    || form == Form.TEXT_HTML));
                } catch (UnreadableDocument | RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            result.completeExceptionally(new UnreadableDocument("too many documents being filtered at once", e));
        }
        return result;
    }

    /** The content type of the answer. */
    String contentType(FilteredDocument filtered) {
        return form == Form.TEXT_HTML ? "text/html; charset=utf-8" : filtered.contentType();
    }

    /** The reason a document is refused with when it cannot be read. */
    static String unreadable() {
        return RegistryReasons.DOCUMENT_UNREADABLE;
    }

    void release() {
        if (body != null) {
            body.release();
            body = null;
        }
    }
}
