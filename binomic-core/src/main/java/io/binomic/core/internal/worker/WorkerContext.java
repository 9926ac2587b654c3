package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.core.internal.StatsRecorder;
import java.time.Clock;
import java.util.function.BooleanSupplier;

/**
 * What every part of one worker shares.
 *
 * @param consumerName the name this worker reads and holds deliveries under
 * @param active true until the worker starts stopping: loops that only take work end then
 */
record WorkerContext(WorkerConfig config, String consumerName, Broker broker, Clock clock, StatsRecorder stats,
                     BooleanSupplier active) { }
