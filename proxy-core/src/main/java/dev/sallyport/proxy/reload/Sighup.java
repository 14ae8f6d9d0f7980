package dev.sallyport.proxy.reload;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGHUP as a reload trigger, where the JVM lets us handle it (not with {@code -Xrs}, not on every OS).
 * The reload runs on its own thread, never on the signal dispatcher. Closing restores the previous handler.
 */
final class Sighup implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(Sighup.class);

    private final Signal signal;
    private final SignalHandler previous;

    private Sighup(Signal signal, SignalHandler previous) {
        this.signal = signal;
        this.previous = previous;
    }

    static Sighup install(Runnable reload) {
        try {
            Signal hup = new Signal("HUP");
            SignalHandler previous = Signal.handle(hup,
                    s -> Thread.ofPlatform().name("sallyport-sighup-reload").daemon().start(reload));
            return new Sighup(hup, previous);
        } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
            LOGGER.debug("SIGHUP reload unavailable here ({}); use POST /reload or edit the file", e.toString());
            return new Sighup(null, null);
        }
    }

    boolean installed() {
        return signal != null;
    }

    @Override
    public void close() {
        if (signal != null) {
            try {
                Signal.handle(signal, previous);
            } catch (IllegalArgumentException e) {
                LOGGER.debug("SIGHUP: could not restore the previous handler", e);
            }
        }
    }
}
