package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;

/**
 * Run by {@link ModulePathIT} in a JVM where binomic-redis, Redisson and Jackson sit on the
 * module path: finds the broker, its scheduler and the codec through their {@code provides} clauses
 * and moves one message through Redis, by way of the scheduler's delayed set. Argument: the Redis URL.
 */
public final class ModulePathSmoke {
    private ModulePathSmoke() { }

    public static void main(String[] args) throws Exception {
        BrokerProvider provider = ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis")).findFirst().orElseThrow();
        PayloadCodec codec = ServiceLoader.load(PayloadCodec.class).stream().map(ServiceLoader.Provider::get)
                .filter(c -> c.id().equals("jackson")).findFirst().orElseThrow();
        SchedulerProvider schedulers = ServiceLoader.load(SchedulerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("redis")).findFirst().orElseThrow();
        String queue = "modulepath-" + UUID.randomUUID();
        try (Broker broker = provider.create(BrokerConfig.builder().url(args[0]).build())) {
            broker.start(List.of(queue));
            Scheduler scheduler = schedulers.create(broker);
            scheduler.schedule(Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now(), codec.encode(Map.of("k", "v")), Map.of()),
                    Instant.now().minusSeconds(1));
            scheduler.moveDue(queue, Instant.now(), 10);
            List<Delivery> got = broker.fetch(List.of(queue), "smoke", 1, Duration.ofSeconds(2));
            Object payload = codec.decode(got.getFirst().message().orElseThrow().payload(), Map.class);
            broker.settle("smoke", got.stream().<io.binomic.api.spi.Settlement>map(io.binomic.api.spi.Settlement.Ack::new).toList());
            System.out.println("MODULE PATH OK provider-module=" + provider.getClass().getModule().getName()
                    + " codec-module=" + codec.getClass().getModule().getName()
                    + " scheduler-module=" + schedulers.getClass().getModule().getName() + " payload=" + payload);
        }
    }
}
