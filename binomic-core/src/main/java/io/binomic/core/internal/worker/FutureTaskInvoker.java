package io.binomic.core.internal.worker;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The fallback when preview features are off: a virtual thread and a timed {@link Future#get}.
 * On timeout or cancellation the task is interrupted; unlike the structured invoker it is not
 * awaited, so a handler that ignores interruption may outlive its outcome.
 */
final class FutureTaskInvoker implements TaskInvoker {
    private static final ThreadFactory THREADS = Thread.ofVirtual().name("binomic-task-", 0).factory();

    @Override
    public Object invoke(Callable<?> call, Duration timeout) throws TimeoutException, ExecutionException, InterruptedException {
        var task = new java.util.concurrent.FutureTask<Object>(call::call);
        THREADS.newThread(task).start();
        try {
            return task.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            task.cancel(true);
            throw new TimeoutException("task overran its timeout of " + timeout);
        } catch (InterruptedException e) {
            task.cancel(true);
            throw e;
        }
    }

    @Override
    public String name() {
        return "future";
    }
}
