package io.binomic.api.internal;

import io.binomic.api.TaskContext;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * Binds the {@link TaskContext} of a running handler. Exported to the core only: applications
 * read the context, they never bind one.
 */
public final class CurrentTask {
    private static final ScopedValue<TaskContext> CURRENT = ScopedValue.newInstance();

    private CurrentTask() { }

    /** The bound context, if any. */
    public static Optional<TaskContext> find() { return CURRENT.isBound() ? Optional.of(CURRENT.get()) : Optional.empty(); }

    /** Runs {@code body} with {@code context} bound. */
    public static <R> R callWith(TaskContext context, Callable<R> body) throws Exception {
        return ScopedValue.where(CURRENT, context).call(body::call);
    }
}
