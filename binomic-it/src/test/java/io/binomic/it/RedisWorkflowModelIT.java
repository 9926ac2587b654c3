package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.WorkflowModelProperties;
import java.util.List;

/** The model-based test of workflow bookkeeping against a real Redis. */
class RedisWorkflowModelIT extends WorkflowModelProperties {
    private final RedisServer redis = RedisServer.shared();

    @Override
    protected Broker createBroker() {
        return Brokers.redis(redis);
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    @Override
    protected int examples() {
        return Integer.getInteger("model.examples", 8); // about 2 s a sequence on a loaded 2-core machine: -Dmodel.examples=100 for a long run
    }

    /** The broker connects once; each sequence's queues get their stream and group as start() makes them. */
    @Override
    protected void prepare(Broker started, List<String> queues) {
        for (String queue : queues) {
            redis.call("XGROUP", "CREATE", "binomic:{" + queue + "}:stream", "binomic", "0", "MKSTREAM");
        }
    }
}
