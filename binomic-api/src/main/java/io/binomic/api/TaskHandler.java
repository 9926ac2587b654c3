package io.binomic.api;

/**
 * The code of a task: takes a typed argument (a record, typically) and may return a value.
 *
 * @param <A> the argument type, encoded as JSON on the wire
 * @param <R> the result type ({@link Void} for none)
 */
@FunctionalInterface
public interface TaskHandler<A, R> {
    R handle(A argument) throws Exception;

    /** A handler without argument, the shape CRON and INTERVAL tasks must have. */
    @FunctionalInterface
    interface NoArgument {
        void run() throws Exception;
    }
}
