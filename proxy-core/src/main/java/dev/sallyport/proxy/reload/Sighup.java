package dev.sallyport.proxy.reload;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP as a reload trigger, where the JVM lets us handle it (not with {@code -Xrs}, not on every OS). The JDK's
 * only handler API is {@code sun.misc.Signal} (module {@code jdk.unsupported}); it is reached by name so the build,
 * which treats every compiler warning as an error, has no reference to it. The reload runs on its own thread,
 * never on the signal dispatcher.
 *
 * <p>A process has one handler: it is installed with the first registration and runs every open one's reload, and
 * the one before it is put back when the last closes. So proxies in one JVM (tests, embedders) may close in any
 * order without one's close taking the signal from another that is still open.
 */
final class Sighup implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(Sighup.class);

    /** Guards the fields below. */
    private static final Object LOCK = new Object();
    private static final List<Sighup> OPEN = new ArrayList<>();
    private static Signals signals;     // while OPEN is not empty
    private static Object previous;     // the handler before ours, while installed

    /** The reflective handles of {@code sun.misc.Signal} for HUP. */
    private record Signals(Object hup, MethodHandle handle) {}

    private final Runnable reload;
    private final boolean installed;

    private Sighup(Runnable reload, boolean installed) {
        this.reload = reload;
        this.installed = installed;
    }

    static Sighup install(Runnable reload) {
        synchronized (LOCK) {
            if (OPEN.isEmpty() && !installHandler()) {
                return new Sighup(reload, false);
            }
            Sighup s = new Sighup(reload, true);
            OPEN.add(s);
            return s;
        }
    }

    private static boolean installHandler() {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Object hup = lookup.findConstructor(signalClass, MethodType.methodType(void.class, String.class))
                    .invoke("HUP");
            MethodHandle handle = lookup.findStatic(signalClass, "handle",
                    MethodType.methodType(handlerClass, signalClass, handlerClass));
            Object handler = Proxy.newProxyInstance(Sighup.class.getClassLoader(), new Class<?>[] {handlerClass},
                    (proxy, method, args) -> {
                        if (method.getName().equals("handle")) {
                            reloadAll();
                            return null;
                        }
                        return switch (method.getName()) {
                            case "hashCode" -> System.identityHashCode(proxy);
                            case "equals" -> proxy == args[0];
                            default -> "Sighup.handler";
                        };
                    });
            previous = handle.invoke(hup, handler);
            signals = new Signals(hup, handle);
            return true;
        } catch (Throwable e) {
            LOGGER.debug("SIGHUP reload unavailable here ({}); use POST /reload or edit the file", e.toString());
            return false;
        }
    }

    private static void reloadAll() {
        List<Sighup> open;
        synchronized (LOCK) {
            open = List.copyOf(OPEN);
        }
        Thread.ofPlatform().name("sallyport-sighup-reload").daemon().start(() -> {
            for (Sighup s : open) {
                try {
                    s.reload.run();
                } catch (RuntimeException e) {
                    LOGGER.warn("SIGHUP reload failed: error={}", e.toString());
                }
            }
        });
    }

    boolean installed() {
        return installed;
    }

    @Override
    public void close() {
        synchronized (LOCK) {
            if (!OPEN.remove(this) || !OPEN.isEmpty()) {
                return;
            }
            try {
                Object _ = signals.handle().invoke(signals.hup(), previous);
            } catch (Throwable e) {
                LOGGER.debug("SIGHUP: could not restore the previous handler", e);
            }
            signals = null;
            previous = null;
        }
    }
}
