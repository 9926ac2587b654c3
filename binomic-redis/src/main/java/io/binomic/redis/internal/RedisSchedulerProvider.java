package io.binomic.redis.internal;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import java.util.Set;

/** Provides the durable {@link RedisScheduler} of a {@code redis://} or {@code rediss://} broker. */
public final class RedisSchedulerProvider implements SchedulerProvider {

    @Override
    public String id() {
        return "redis";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel");
    }

    @Override
    public Scheduler create(Broker broker) {
        if (broker instanceof RedisBroker redis) {
            return new RedisScheduler(redis);
        }
        throw new IllegalArgumentException("the Redis scheduler keeps deferred messages in the delayed sets of its Redis broker,"
                + " which stores retries there atomically with the ack, so it serves only the Redis broker, not "
                + broker.getClass().getName() + ": select the broker and the scheduler with the same URL scheme or broker id");
    }
}
