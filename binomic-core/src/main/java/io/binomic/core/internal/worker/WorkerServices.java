package io.binomic.core.internal.worker;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.internal.PartitionRouter;
import io.binomic.core.internal.StatsRecorder;
import java.time.Clock;

/**
 * What a worker uses of its client: the broker and its scheduler, the partitions of its queues,
 * the clock and the statistics of the process.
 *
 * @param scheduler the broker's store of deferred work, whose due messages the worker moves
 * @param partitions the partitions of partitioned queues; null for a router of the worker's own
 * @param runObservers what is told of each handler run; null for nothing
 */
public record WorkerServices(Broker broker, Scheduler scheduler, PartitionRouter partitions, Clock clock, StatsRecorder stats,
                             RunObservers runObservers) { }
