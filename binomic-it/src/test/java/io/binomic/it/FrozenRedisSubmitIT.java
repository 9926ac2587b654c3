package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A submit while Redis is frozen (SIGSTOP: connections stay open, nothing answers) fails within its
 * documented bound (BrokerConfig.commandTimeout), its tries included, saying that Redis did not answer; Redisson's own
 * retries would otherwise keep a request thread waiting several times that long, then blame the
 * connection pool's size.
 */
class FrozenRedisSubmitIT {
    /** BrokerConfig's default, which the tester's application kept. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);
    /**
     * What a loaded machine still meets: twice the documented bound of a submit, 2 x the command
     * timeout (the read of the queue's partition count, then the write).
     */
    private static final Duration UPPER_BOUND = COMMAND_TIMEOUT.multipliedBy(2).multipliedBy(2);

    private static final Task<String, String> GREET = Task.builder("greet", String.class, String.class).queue("greetings").build();

    @Test
    void aSubmitWhileRedisIsFrozenFailsWithinTheCommandTimeoutSayingRedisDidNotAnswer() {
        try (RedisServer redis = RedisServer.startNew();
             Binomic client = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url())
                     .schedulePeriodicTasks(false).build()).task(GREET).build().start()) {
            client.submit(GREET, "before the freeze");
            // Frozen until both submits have failed, however long a loaded machine makes them take.
            redis.freeze();
            try {
                // The second submit finds the connections the first one left behind.
                for (int submit = 1; submit <= 2; submit++) {
                    long start = System.nanoTime();
                    BrokerException e = assertThrows(BrokerException.class, () -> client.submit(GREET, "while frozen"));
                    Duration blocked = Duration.ofNanos(System.nanoTime() - start);
                    assertTrue(blocked.compareTo(UPPER_BOUND) < 0, "submit " + submit + " blocked " + blocked.toMillis() + " ms: "
                            + e.getMessage());
                    assertTrue(e.getMessage().startsWith("Redis at 127.0.0.1:" + redis.port() + " did not answer the enqueue on queue"
                            + " 'greetings' within 5000 ms (BrokerConfig.commandTimeout"), e.getMessage());
                    assertFalse(e.getMessage().contains("pool size"), e.getMessage());
                }
            } finally {
                redis.thaw();
            }
            client.submit(GREET, "after the thaw");
        }
    }
}
