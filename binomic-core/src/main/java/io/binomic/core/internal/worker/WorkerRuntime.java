package io.binomic.core.internal.worker;

import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskRegistry;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.StatsRecorder;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/** A worker. TODO: implementation in progress. */
public final class WorkerRuntime implements Worker {
    public WorkerRuntime(WorkerConfig config, List<String> queues, TaskDefaults defaults, TaskRegistry registry,
                         Broker broker, PayloadCodec codec, Clock clock, StatsRecorder stats) {
    }

    public void start() {
    }

    @Override
    public String consumerName() {
        return "TODO";
    }

    @Override
    public WorkerCounters counters() {
        return new WorkerCounters(0, 0, 0, 0, 0);
    }

    @Override
    public void stop(Duration grace) {
    }

    @Override
    public boolean isStopped() {
        return false;
    }

    @Override
    public void close() {
    }
}
