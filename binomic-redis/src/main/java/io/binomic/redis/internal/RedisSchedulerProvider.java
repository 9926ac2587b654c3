package io.binomic.redis.internal;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import java.util.Set;

/** Provides the durable {@link RedisScheduler} of a {@code redis://} or {@code rediss://} broker. */
public final class RedisSchedulerProvider implements SchedulerProvider {

    @Override
    public String id() { return RedisBrokerProvider.ID; }

    @Override
    public Set<String> schemes() { return RedisBrokerProvider.SCHEMES; }

    @Override
    public Class<RedisBroker> brokerType() { return RedisBroker.class; }

    @Override
    public Scheduler create(Broker broker) { return new RedisScheduler((RedisBroker) broker); }
}
