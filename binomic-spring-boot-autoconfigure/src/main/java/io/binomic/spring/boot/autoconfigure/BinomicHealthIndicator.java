package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The worker's <em>consuming</em> health ({@link WorkerHealth}), not merely whether the process
 * is up: {@code UP} while it fetches and settles; {@code OUT_OF_SERVICE} while the broker is
 * unreachable (it resumes by itself, and a restart would lose the outcomes it holds); {@code DOWN}
 * when a control loop stalled (only a restart helps); {@code UNKNOWN} when no worker runs.
 * Details: the state, the problem, the times since the last fetch round and settlement, the
 * outcomes held, and the worker's counters.
 */
public class BinomicHealthIndicator extends AbstractHealthIndicator {
    private final Supplier<Optional<Worker>> worker;

    /** Reports the health of the worker {@code worker} supplies, when one runs. */
    public BinomicHealthIndicator(Supplier<Optional<Worker>> worker) {
        super("Binomic worker health check failed");
        this.worker = worker;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Optional<Worker> running = worker.get();
        if (running.isEmpty()) {
            builder.unknown().withDetail("state", "NOT_RUNNING");
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
}
