package dev.sallyport.proxy.reload;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP as a reload trigger, where the JVM lets us handle it (not with {@code -Xrs}, not on every OS). The JDK's
 * only handler API is {@code sun.misc.Signal} (module {@code jdk.unsupported}); it is reached by name so the build,
 * which treats every compiler warning as an error, has no reference to it. The reload runs on its own thread,
 * never on the signal dispatcher. Closing restores the previous handler.
 */
final class Sighup implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(Sighup.class);

    private final Object signal;
    private final Object previous;
    private final MethodHandle handle;

    private Sighup(Object signal, Object previous, MethodHandle handle) {
        this.signal = signal;
        this.previous = previous;
        this.handle = handle;
    }

    static Sighup install(Runnable reload) {
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
                            Thread.ofPlatform().name("sallyport-sighup-reload").daemon().start(reload);
                            return null;
                        }
                        return switch (method.getName()) {
                            case "hashCode" -> System.identityHashCode(proxy);
                            case "equals" -> proxy == args[0];
                            default -> "Sighup.handler";
                        };
                    });
            Object previous = handle.invoke(hup, handler);
            return new Sighup(hup, previous, handle);
        } catch (Throwable e) {
            LOGGER.debug("SIGHUP reload unavailable here ({}); use POST /reload or edit the file", e.toString());
            return new Sighup(null, null, null);
        }
    }

    boolean installed() {
        return signal != null;
    }

    @Override
    public void close() {
        if (signal != null) {
            try {
                Object _ = handle.invoke(signal, previous);
            } catch (Throwable e) {
                LOGGER.debug("SIGHUP: could not restore the previous handler", e);
            }
        }
    }
}
