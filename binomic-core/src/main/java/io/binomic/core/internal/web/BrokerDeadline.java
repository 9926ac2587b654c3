package io.binomic.core.internal.web;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Runs the broker queries of one page or scrape with a deadline shorter than the client's own
 * timeouts and retries (about 15 s on Redis), so that while the broker is down the dashboard
 * answers at once that it is, and Prometheus (10 s scrape timeout by default) still stores
 * {@code binomic_broker_up 0} and the counters. A query that overruns finishes, or fails, on its
 * own daemon thread.
 */
final class BrokerDeadline {
    /** How long the broker queries of one request may take. */
    static final Duration LIMIT = Duration.ofSeconds(3);

    private BrokerDeadline() { }

    /**
     * {@code queries}' result, or a {@link TimeoutException} after {@link #LIMIT}. Runs on a
     * platform thread: busy virtual-thread carriers must not delay it.
     */
    static <T> T within(Supplier<T> queries) throws TimeoutException { return within(LIMIT, queries); }

    /** {@code queries}' result, or a {@link TimeoutException} after {@code limit}. */
    static <T> T within(Duration limit, Supplier<T> queries) throws TimeoutException {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("binomic-dashboard-query").start(() -> {
            try {
                result.complete(queries.get());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        try {
            return result.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TimeoutException("interrupted");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
