package io.binomic.redis.internal;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import java.util.Set;

/** Provides {@link RedisBroker} for {@code redis://} and {@code rediss://} (TLS) URLs. */
public final class RedisBrokerProvider implements BrokerProvider {

    @Override
    public String id() {
        return "redis";
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel");
    }

    @Override
    public Broker create(BrokerConfig config) {
        return new RedisBroker(config);
    }
}
