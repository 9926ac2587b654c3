package io.binomic.core.internal.worker;

import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.core.internal.StatsRecorder;
import java.time.Clock;
import java.util.function.BooleanSupplier;

/**
 * What every part of one worker shares: its settings, its name towards the broker, the broker,
 * the clock, the statistics it feeds, and whether it still takes work.
 *
 * @param config the worker's settings
 * @param consumerName the name this worker reads and holds deliveries under
 * @param broker the broker it reads from and writes to
 * @param clock the worker's clock
 * @param stats the statistics of this process
 * @param active true until the worker starts stopping: loops that only take work end then
 */
record WorkerContext(WorkerConfig config, String consumerName, Broker broker, Clock clock, StatsRecorder stats,
                     BooleanSupplier active) { }
