package io.binomic.core.internal.process;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;

/**
 * Takes SIGTERM, SIGINT and SIGHUP from the JVM's default handling, which starts the JVM's shutdown, so that a worker JVM or
 * the master can drain while the JVM still runs normally. A drain in a shutdown hook races the other hooks:
 * java.util.logging's (and other logging backends') own hook closes the handlers while the drain is still logging, and
 * the JVM then exits with the signal's code (130, 143) although it stopped cleanly.
 *
 * <p>The JDK's only way to handle a signal is {@code sun.misc.Signal} (module jdk.unsupported). It is called reflectively:
 * javac's warning on that API cannot be suppressed, and the build treats warnings as errors.
 */
public final class DrainSignals {
    /**
     * The signals a terminal's Ctrl-C, {@code kill}, {@code timeout} and service managers send to stop a process, and the
     * hang-up a closed terminal or a dropped ssh session sends to each process it ran.
     */
    static final List<String> NAMES = List.of("TERM", "INT", "HUP");

    private DrainSignals() {}

    /**
     * Runs {@code onSignal} on each of {@link #NAMES}, instead of starting the JVM's shutdown. Returns false when the JVM
     * does not let them be handled (started with {@code -Xrs}, or on a platform without them): the JVM's shutdown then
     * stays what starts the drain. A signal ignored at launch ({@code nohup}, a shell's background job for SIGINT) stays
     * ignored, as with the JVM's own handling.
     */
    public static boolean install(Runnable onSignal) {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handler = Class.forName("sun.misc.SignalHandler");
            Object handle = Proxy.newProxyInstance(DrainSignals.class.getClassLoader(), new Class<?>[] {handler},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "handle" -> {
                            onSignal.run();
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> "DrainSignals handler";
                    });
            Method install = signal.getMethod("handle", signal, handler);
            for (String name : NAMES) {
                install.invoke(null, signal.getConstructor(String.class).newInstance(name), handle);
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // -Xrs or a platform without the signal (IllegalArgumentException from sun.misc.Signal), or a runtime
            // without jdk.unsupported.
            return false;
        }
    }

    /**
     * Blocks until {@code signalled}, the latch a handler {@linkplain #install installed} counts down, is counted down: an
     * interrupt does not end the wait, as only a signal ends a foreground command, and the stop that follows must not
     * meet it.
     */
    public static void awaitSignal(java.util.concurrent.CountDownLatch signalled) {
        while (true) {
            try {
                signalled.await();
                return;
            } catch (InterruptedException e) {
                // not a signal: wait on
            }
        }
    }
}
