package io.binomic.core.internal.worker;

import java.util.function.Supplier;

/**
 * Chooses how handlers run. Workers run them on the delivery's own thread ({@link #forWorkers()});
 * {@link #best()} is the structured invoker when preview features are enabled, the future-based
 * one otherwise.
 */
public final class TaskInvokers {
    private static final System.Logger LOG = System.getLogger(TaskInvokers.class.getName());
    /**
     * {@code -Dbinomic.taskInvoker=structured} (or {@code future}) runs each handler on a second
     * virtual thread as before issue 14: kept selectable to compare, and as a way back should a
     * handler depend on running on a thread of its own.
     */
    static final String PROPERTY = "binomic.taskInvoker";

    private TaskInvokers() { }

    /** The invoker a worker runs its handlers with: {@link DirectTaskInvoker} unless {@value #PROPERTY} says otherwise. */
    public static TaskInvoker forWorkers() {
        return forWorkers(System.getProperty(PROPERTY));
    }

    /** A misspelt value fails the worker's start instead of silently running the default. */
    static TaskInvoker forWorkers(String chosen) {
        return switch (chosen == null || chosen.isBlank() ? "direct" : chosen.strip()) {
            case "direct" -> direct();
            case "structured" -> {
                TaskInvoker best = best();
                if (!best.name().equals("structured")) {
                    // Asked for by name: a silent fallback would change how a timed-out handler ends.
                    LOG.log(System.Logger.Level.WARNING, "-D{0}=structured needs --enable-preview on this JVM; running handlers"
                            + " with timed futures instead, whose timed-out handler is interrupted but not awaited", PROPERTY);
                }
                yield best;
            }
            case "future" -> fallback();
            default -> throw new IllegalArgumentException("-D" + PROPERTY + "=" + chosen
                    + " is not an invoker: use direct (the default), structured or future, or leave it unset");
        };
    }

    /** Runs the handler on the calling thread, a shared watchdog enforcing the timeout. */
    public static TaskInvoker direct() {
        return new DirectTaskInvoker();
    }

    /** The best invoker that forks the handler onto a thread of its own that this JVM can load. */
    public static TaskInvoker best() {
        // Not StructuredTaskInvoker::new: a constructor reference is linked where it is written,
        // outside select's try, so a JVM without --enable-preview threw instead of falling back.
        // A call inside a method of this class loads the preview class only when select runs it.
        return select(TaskInvokers::structured);
    }

    private static TaskInvoker structured() {
        return new StructuredTaskInvoker();
    }

    /** The future-based invoker, always available. */
    public static TaskInvoker fallback() {
        return new FutureTaskInvoker();
    }

    static TaskInvoker select(Supplier<TaskInvoker> structured) {
        try {
            return structured.get();
        } catch (UnsupportedClassVersionError e) {
            // Thrown when the preview-marked class is loaded without --enable-preview.
            LOG.log(System.Logger.Level.DEBUG, "StructuredTaskScope unavailable ({0}); using timed futures", e.getMessage());
            return fallback();
        }
    }
}
