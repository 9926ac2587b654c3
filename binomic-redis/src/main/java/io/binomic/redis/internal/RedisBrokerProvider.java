package io.binomic.redis.internal;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import java.util.Optional;
import java.util.Set;

/** Provides {@link RedisBroker} for {@code redis://} and {@code rediss://} (TLS) URLs. */
public final class RedisBrokerProvider implements BrokerProvider {
    /** The id of this provider and of {@link RedisSchedulerProvider}, which serves its brokers. */
    static final String ID = "redis";
    /** The URL schemes of this provider and of {@link RedisSchedulerProvider}. */
    static final Set<String> SCHEMES = Set.of("redis", "rediss", "redis+cluster", "rediss+cluster", "redis+sentinel",
            "rediss+sentinel");

    @Override
    public String id() { return ID; }

    @Override
    public Set<String> schemes() { return SCHEMES; }

    @Override
    public Broker create(BrokerConfig config) { return new RedisBroker(config); }

    @Override
    public Optional<Set<String>> optionNames() {
        return Optional.of(Set.of(RedissonSetup.REDISSON_CONFIG_OPTION, RedissonSetup.TRUSTSTORE_OPTION,
                RedissonSetup.TRUSTSTORE_PASSWORD_OPTION, RedissonSetup.WAIT_REPLICAS_OPTION, RedissonSetup.WAIT_TIMEOUT_OPTION,
                EvictionPolicyCheck.OPTION, EvictionPolicyCheck.RECHECK_OPTION));
    }
}
