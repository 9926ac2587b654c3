package io.binomic.core.internal.worker;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.StructuredTaskScope;
import java.util.concurrent.TimeoutException;

/**
 * The one class that uses {@link StructuredTaskScope} (a preview API in Java 25): javac marks only
 * this class as needing {@code --enable-preview}, so loading it fails cleanly without the flag and
 * {@link TaskInvokers#best()} falls back to {@link FutureTaskInvoker}. The scope guarantees the
 * task's thread has ended before the outcome is recorded: a timed-out handler is interrupted and
 * awaited, never left running beside its retry.
 */
final class StructuredTaskInvoker implements TaskInvoker {

    @Override
    public Object invoke(Callable<?> call, Duration timeout) throws TimeoutException, ExecutionException, InterruptedException {
        try (var scope = StructuredTaskScope.open(StructuredTaskScope.Joiner.<Object>anySuccessfulResultOrThrow(),
                cfg -> cfg.withTimeout(timeout))) {
            scope.fork(call::call);
            return scope.join();
        } catch (StructuredTaskScope.TimeoutException e) {
            throw new TimeoutException("task overran its timeout of " + timeout);
        } catch (StructuredTaskScope.FailedException e) {
            throw new ExecutionException(e.getCause());
        }
    }

    @Override
    public String name() {
        return "structured";
    }
}
