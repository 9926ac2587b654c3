package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.core.Binomic;
import io.binomic.it.ChaosReport.Fault;
import java.util.List;
import java.util.Random;

/**
 * The Redis a {@link ChaosDriver} run is against, and the faults that Redis suffers: one server
 * ({@link ChaosIT}) or a Cluster ({@link ClusterChaosIT}). The driver applies the faults of the
 * worker JVMs and the master itself, and never overlaps them with a Redis fault of the master.
 */
interface ChaosTarget extends AutoCloseable {
    /** The run's name, for its directory under {@code target/}. */
    String name();

    /** What the run's log lines start with. */
    String label();

    /** The broker of every client, the final sweep and (URL, and options as environment variables) the master and its workers. */
    BrokerConfig broker();

    /** The Redis faults, one cycle shuffled at a time. */
    List<String> redisCycle(ChaosDriver.Size size);

    /** Whether submissions wait while a Redis fault is applied. */
    boolean pausesSubmissions();

    /** Applies one Redis fault of {@link #redisCycle} and returns it as the report will judge it. */
    Fault apply(String kind, Random random, ChaosDriver.Size size);

    /** Whether the run adds batches ({@link ChaosFlows}) among its jobs: the broker must offer them. */
    default boolean batches() {
        return false;
    }

    /** Whether the run adds workflows ({@link ChaosFlows}) too, beside its batches: the broker must offer them. */
    default boolean workflows() {
        return false;
    }

    /** Set-up through the producer before the master starts. */
    default void prepare(Binomic producer) {
    }

    /** Lines about the target for the result, above the table. */
    default List<String> describe() {
        return List.of();
    }

    /** What the target itself found wrong at the end (e.g. commands Redis refused); fails the run. */
    default List<String> failures() {
        return List.of();
    }

    /** A new broker on this Redis, not started, to inspect what the run left. */
    Broker inspector();

    @Override
    void close();
}
