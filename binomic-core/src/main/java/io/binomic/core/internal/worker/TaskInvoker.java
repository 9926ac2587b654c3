package io.binomic.core.internal.worker;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/** Runs one task execution with a timeout, on a virtual thread. */
public interface TaskInvoker {

    /**
     * Runs {@code call}, interrupting it when it overruns {@code timeout}.
     *
     * @throws TimeoutException when it overran (it has been interrupted)
     * @throws ExecutionException with the handler's exception as cause
     * @throws InterruptedException when the calling thread was interrupted (the worker is cancelling)
     */
    Object invoke(Callable<?> call, Duration timeout) throws TimeoutException, ExecutionException, InterruptedException;

    /** A short name for logs. */
    String name();
}
