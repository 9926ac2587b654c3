package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The example of binomic-redis/README.md, compiled and run, so the README cannot rot. */
class RedisWorkerExampleIT {

    record Greeting(String name) { }

    @Test
    void readmeExampleRunsAWorkerAgainstRedis() throws Exception {
        String redisUrl = RedisServer.shared().url();
        Set<String> greeted = ConcurrentHashMap.newKeySet();

        // @start region="redis-worker"
        // The definition: producers and workers share it; it carries no code.
        Task<Greeting, Void> greet = Task.builder("greet", Greeting.class).queue("greetings").maxAttempts(5).build();

        BinomicConfig config = BinomicConfig.builder()
                .brokerUrl(redisUrl) // e.g. redis://:secret@redis.internal:6379/0, rediss:// for TLS
                .build();
        // The worker binds the handler.
        try (Binomic binomic = Binomic.builder().config(config).handle(greet, g -> {
            greeted.add(g.name());
            return null;
        }).build().start()) {
            binomic.startWorker(); // reads the "greetings" stream through consumer group "binomic"
            binomic.submit(greet, new Greeting("Ada"));
            // ... run until shutdown; a worker in another JVM or machine with the same config shares the work
            // @end
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (greeted.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        }
        assertEquals(Set.of("Ada"), greeted);
    }
}
