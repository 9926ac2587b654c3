package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.PriorityContractTest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The priority contract, run against a real Redis. */
class RedisPriorityContractTest extends PriorityContractTest {

    @Override
    protected Broker createBroker(Map<String, String> options) {
        return Brokers.redis(RedisServer.shared(), b -> b.options(options));
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    private static String giveBackScript() throws IOException {
        // binomic-it is on the class path: the broker jar's resources are readable
        try (InputStream in = RedisPriorityContractTest.class.getClassLoader().getResourceAsStream("io/binomic/redis/internal/give_back.lua")) {
            assertTrue(in != null, "give_back.lua on the class path");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** An entry's id and fields as XRANGE and XREADGROUP list them. */
    private static List<?> entry(Object reply, int i) {
        return (List<?>) ((List<?>) reply).get(i);
    }

    @Test
    void whatAWaitOverEveryLevelHandsOutBeyondMaxGoesBackToTheEndOfItsStreamUnchanged() throws Exception {
        RedisServer redis = RedisServer.shared();
        String script = giveBackScript();
        String stream = "give-back-" + UUID.randomUUID();
        redis.call("XGROUP", "CREATE", stream, "g", "$", "MKSTREAM");
        String first = String.valueOf(redis.call("XADD", stream, "*", "id", "a", "attempt", "1"));
        String second = String.valueOf(redis.call("XADD", stream, "*", "id", "b", "attempt", "1"));
        redis.call("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", stream, ">");

        assertEquals(1L, redis.call("EVAL", script, "1", stream, "g", "c1", first));
        List<?> pending = (List<?>) redis.call("XPENDING", stream, "g", "-", "+", "10", "c1");
        assertEquals(List.of(second), pending.stream().map(p -> String.valueOf(((List<?>) p).getFirst())).toList(),
                "the entry given back is no longer pending to the consumer; the one it kept is");
        Object all = redis.call("XRANGE", stream, "-", "+");
        assertEquals(2, ((List<?>) all).size());
        assertEquals(second, String.valueOf(entry(all, 0).getFirst()));
        assertEquals(List.of("id", "a", "attempt", "1"), entry(all, 1).get(1), "added again at the end, its fields unchanged");
        String again = String.valueOf(entry(all, 1).getFirst());

        Object read = redis.call("XREADGROUP", "GROUP", "g", "c2", "COUNT", "10", "STREAMS", stream, ">");
        List<?> entries = (List<?>) ((List<?>) ((List<?>) read).getFirst()).get(1);
        assertEquals(List.of(again), entries.stream().map(e -> String.valueOf(((List<?>) e).getFirst())).toList(),
                "the next read hands it out");

        assertEquals(0L, redis.call("EVAL", script, "1", stream, "g", "c1", again), "pending to another consumer: left alone");
        assertEquals(2L, redis.call("XLEN", stream));
        redis.call("DEL", stream);
    }
}
