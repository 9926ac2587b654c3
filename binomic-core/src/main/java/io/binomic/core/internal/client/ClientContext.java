package io.binomic.core.internal.client;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.internal.PartitionRouter;
import io.binomic.core.internal.jobs.JobHandles;
import io.binomic.core.internal.worker.RunObservers;
import java.time.Clock;
import java.util.function.Supplier;

/**
 * What the client's submitter and job lookup share: where jobs go and how their handles are made.
 *
 * @param broker the broker jobs are enqueued on and their records read from
 * @param scheduler the broker's store of deferred work, created when the client starts
 * @param partitions the partitions of partitioned queues: where a submit goes
 * @param jobs makes the handles of submitted and looked-up jobs
 * @param clock the client's clock
 * @param runObservers what the client's workers tell of each handler run
 */
public record ClientContext(Broker broker, Supplier<Scheduler> scheduler, PartitionRouter partitions, JobHandles jobs, Clock clock,
                            RunObservers runObservers) { }
