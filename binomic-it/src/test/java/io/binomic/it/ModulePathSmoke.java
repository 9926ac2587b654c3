package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.Message;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PayloadCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;

/**
 * Run by {@link ModulePathIT} in a JVM where binomic-redis, Redisson and Jackson sit on the
 * module path: finds the provider and the codec through their {@code provides} clauses and moves
 * one message through Redis. Argument: the Redis URL.
 */
public final class ModulePathSmoke {
    private ModulePathSmoke() { }

    public static void main(String[] args) throws Exception {
        BrokerProvider provider = ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis")).findFirst().orElseThrow();
        PayloadCodec codec = ServiceLoader.load(PayloadCodec.class).stream().map(ServiceLoader.Provider::get)
                .filter(c -> c.id().equals("jackson")).findFirst().orElseThrow();
        String queue = "modulepath-" + UUID.randomUUID();
        try (Broker broker = provider.create(BrokerConfig.builder().url(args[0]).build())) {
            broker.start(List.of(queue));
            broker.enqueue(new Message(UUID.randomUUID(), "t", queue, 1, Instant.now(), codec.encode(Map.of("k", "v")), Map.of()));
            List<Delivery> got = broker.fetch(List.of(queue), "smoke", 1, Duration.ofSeconds(2));
            Object payload = codec.decode(got.getFirst().message().orElseThrow().payload(), Map.class);
            broker.settle("smoke", got.stream().<io.binomic.api.spi.Settlement>map(io.binomic.api.spi.Settlement.Ack::new).toList());
            System.out.println("MODULE PATH OK provider-module=" + provider.getClass().getModule().getName()
                    + " codec-module=" + codec.getClass().getModule().getName() + " payload=" + payload);
        }
    }
}
