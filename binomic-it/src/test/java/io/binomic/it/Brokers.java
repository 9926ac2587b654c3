package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.core.internal.Providers;
import java.util.ServiceLoader;
import java.util.function.UnaryOperator;

/** Creates Redis brokers and their schedulers the way applications get them: through ServiceLoader. */
final class Brokers {
    private Brokers() { }

    static BrokerProvider redisProvider() {
        return ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis")).findFirst()
                .orElseThrow(() -> new AssertionError("no BrokerProvider with id 'redis' found by ServiceLoader"));
    }

    /** A new, unstarted broker on {@code server}. */
    static Broker redis(RedisServer server) {
        return redis(server, b -> b);
    }

    static Broker redis(RedisServer server, UnaryOperator<BrokerConfig.Builder> settings) {
        return redisProvider().create(settings.apply(BrokerConfig.builder().url(server.url())).build());
    }

    /** A new, unstarted broker on {@code cluster}, configured by a Redisson YAML file (option {@code redisson.config}). */
    static Broker redisCluster(RedisClusterSet cluster, java.util.Map<String, String> moreOptions) {
        java.util.Map<String, String> options = new java.util.HashMap<>(moreOptions);
        options.put("redisson.config", cluster.writeRedissonYaml().toString());
        return redisProvider().create(BrokerConfig.builder().url("redis://cluster").options(options).build());
    }

    /** A new, unstarted broker on {@code cluster}, configured by a {@code redis+cluster://} URL of its nodes. */
    static Broker redisClusterByUrl(RedisClusterSet cluster, UnaryOperator<BrokerConfig.Builder> settings) {
        return redisProvider().create(settings.apply(BrokerConfig.builder().url(cluster.url())).build());
    }

    /** The durable scheduler of {@code started}, a Redis broker. */
    static Scheduler scheduler(Broker started) {
        SchedulerProvider redis = ServiceLoader.load(SchedulerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis")).findFirst()
                .orElseThrow(() -> new AssertionError("no SchedulerProvider with id 'redis' found by ServiceLoader"));
        return Providers.createScheduler(redis, started); // where the core checks that a scheduler serves its broker
    }
}
