package dev.sallyport.sandbox.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Proxy;
import org.slf4j.LoggerFactory;

/**
 * The runner's SIGWINCH, passed on to the command. A terminal tells its foreground process group that its window
 * changed size, and that group is the runner's: bwrap's {@code --new-session} gives the command a session of its
 * own without a controlling terminal (so that it cannot push input into the host's terminal with {@code TIOCSTI}).
 * The command still holds the terminal on its stdio and reads the size from there ({@code TIOCGWINSZ} needs no
 * controlling terminal), so it only lacks the signal: {@link #forward(Runnable)} catches it and runs the action
 * ({@link HostLink#windowChanged()}) on the JVM's signal thread. The JDK's only handler API is
 * {@code sun.misc.Signal} (module {@code jdk.unsupported}), reached by name so the build, which treats every
 * compiler warning as an error, has no reference to it. Closing restores the previous handler.
 */
public final class ResizeSignal implements AutoCloseable {

    /** The previous handler and how to put it back; null where the JVM lets nobody handle SIGWINCH. */
    private final Runnable restore;

    private ResizeSignal(Runnable restore) {
        this.restore = restore;
    }

    /** Runs {@code onResize} on every SIGWINCH until closed; does nothing where the JVM offers no handler. */
    @SuppressWarnings("ReferenceEquality")  // the handler is a proxy: it equals itself only, as Object's equals does
    public static ResizeSignal forward(Runnable onResize) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Object winch = lookup.findConstructor(signalClass, MethodType.methodType(void.class, String.class))
                    .invoke("WINCH");
            MethodHandle handle = lookup.findStatic(signalClass, "handle",
                    MethodType.methodType(handlerClass, signalClass, handlerClass));
            Object handler = Proxy.newProxyInstance(ResizeSignal.class.getClassLoader(), new Class<?>[] {handlerClass},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "handle" -> {
                            onResize.run();
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> "ResizeSignal.handler";
                    });
            Object previous = handle.invoke(winch, handler);
            return new ResizeSignal(() -> {
                try {
                    Object _ = handle.invoke(winch, previous);
                } catch (Throwable e) {
                    LoggerFactory.getLogger(ResizeSignal.class).debug("SIGWINCH: could not restore the previous "
                            + "handler", e);
                }
            });
        } catch (Throwable e) {
            LoggerFactory.getLogger(ResizeSignal.class).debug("SIGWINCH cannot be handled here ({}); window-size "
                    + "changes do not reach the command", e.toString());
            return new ResizeSignal(null);
        }
    }

    /** Whether SIGWINCH is being forwarded (false where the JVM does not let us handle it, e.g. with -Xrs). */
    public boolean installed() {
        return restore != null;
    }

    @Override
    public void close() {
        if (restore != null) {
            restore.run();
        }
    }
}
