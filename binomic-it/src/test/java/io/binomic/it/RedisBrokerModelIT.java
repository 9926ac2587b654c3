package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.BrokerModelProperties;

/** The model-based test of the delivery state machine against a real Redis. */
class RedisBrokerModelIT extends BrokerModelProperties {
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
        return Integer.getInteger("model.examples", 150);
    }

    /** The broker connects once; each sequence's queue gets its stream and group as start() makes them. */
    @Override
    protected void prepare(Broker started, String queue) {
        redis.call("XGROUP", "CREATE", "binomic:{" + queue + "}:stream", "binomic", "0", "MKSTREAM");
    }
}
