package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The worker's <em>consuming</em> health ({@link WorkerHealth}), not merely whether the process
 * is up: {@code UP} while it fetches and settles; {@code OUT_OF_SERVICE} while the broker is
 * unreachable (it resumes by itself, and a restart would lose the outcomes it holds); {@code DOWN}
 * when a control loop stalled (only a restart helps). Details: the state, the problem, the times
 * since the last fetch round and settlement, the outcomes held, and the worker's counters.
 *
 * <p>When no worker runs (a producer-only application), whether the client can submit: {@code UP}
 * when the broker answers a query within {@link #PROBE_DEADLINE}, {@code OUT_OF_SERVICE} when it does
 * not. Such an application depends on its broker as much as on its database, and a component that
 * said {@code UNKNOWN} whatever the broker did would hide an outage from its health.
 */
public class BinomicHealthIndicator extends AbstractHealthIndicator {
    /** How long the broker query of a check may take: less than the client's own timeouts and retries. */
    static final Duration PROBE_DEADLINE = Duration.ofSeconds(3);
    /** A queue nothing uses: reading its counts is a round trip that needs the broker to answer, and creates nothing. */
    private static final String PROBE_QUEUE = "binomic-health-probe";

    private final Binomic binomic;
    private final Supplier<Optional<Worker>> worker;

    /** Reports the health of the worker {@code worker} supplies, and when none runs, whether {@code binomic}'s broker answers. */
    public BinomicHealthIndicator(Binomic binomic, Supplier<Optional<Worker>> worker) {
        super("Binomic health check failed");
        this.binomic = binomic;
        this.worker = worker;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Optional<Worker> running = worker.get();
        if (running.isEmpty()) {
            builder.withDetail("state", "NOT_RUNNING");
            probeBroker().ifPresentOrElse(problem -> builder.outOfService().withDetail("broker", "UNREACHABLE").withDetail("problem", problem),
                    () -> builder.up().withDetail("broker", "UP"));
            return;
        }
        Worker w = running.get();
        WorkerHealth health = w.health();
        Status status = switch (health.state()) {
            case CONSUMING -> Status.UP;
            case BROKER_UNREACHABLE -> Status.OUT_OF_SERVICE;
            case STALLED -> Status.DOWN;
        };
        WorkerCounters c = w.counters();
        builder.status(status)
                .withDetail("state", health.state().name())
                .withDetail("consumer", w.consumerName())
                .withDetail("sinceFetchRound", health.sinceFetchRound().toString())
                .withDetail("sinceSettlement", health.sinceSettlement().toString())
                .withDetail("pendingSettlements", health.pendingSettlements())
                .withDetail("inFlight", c.inFlight())
                .withDetail("succeeded", c.succeeded())
                .withDetail("failed", c.failed())
                .withDetail("retried", c.retried())
                .withDetail("deadLettered", c.deadLettered());
        health.problem().ifPresent(p -> builder.withDetail("problem", p));
    }

    /**
     * Why the broker did not answer a query within {@link #PROBE_DEADLINE}; empty when it did. The query runs on a
     * virtual thread of its own, so that a broker that is down, which the client retries for longer, does not hold
     * the health endpoint: an overrunning query ends, or fails, on that thread, which costs next to nothing meanwhile.
     */
    private Optional<String> probeBroker() {
        CompletableFuture<Void> answered = new CompletableFuture<>();
        Thread.ofVirtual().name("binomic-health-probe").start(() -> {
            try {
                binomic.queueStats(PROBE_QUEUE);
                answered.complete(null);
            } catch (Throwable t) {
                answered.completeExceptionally(t);
            }
        });
        try {
            answered.get(PROBE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            return Optional.empty();
        } catch (TimeoutException e) {
            return Optional.of("the broker did not answer within " + PROBE_DEADLINE.toSeconds() + " s");
        } catch (ExecutionException e) {
            return Optional.of(String.valueOf(e.getCause().getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while asking the broker");
        }
    }
}
