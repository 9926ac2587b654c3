package io.binomic.core.internal.worker;

import java.util.function.Supplier;

/** Chooses the structured invoker when preview features are enabled, the future-based one otherwise. */
public final class TaskInvokers {
    private static final System.Logger LOG = System.getLogger(TaskInvokers.class.getName());

    private TaskInvokers() { }

    /** The best invoker this JVM can load. */
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
