package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The documented ACL rule sets: redis.md shows them exactly as the tests use them, and a rule set
 * that lacks one command makes the call that needs it fail with a message naming the user, the
 * missing command (or, inside a script, the script and the commands it calls) and the fix.
 */
class AclRuleSetsTest {
    private final RedisServer redis = AclRedis.shared();
    private final String queue = "acl-missing-" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void redisMdShowsTheRuleSetsTheTestsUse() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.exists(dir.resolve("module-info-docs"))) {
            dir = dir.getParent();
        }
        String doc = Files.readString(dir.resolve("module-info-docs/redis.md"));
        assertTrue(doc.contains("```\n" + AclRedis.rulesText() + "```\n"),
                "module-info-docs/redis.md must quote " + AclRedis.RULES + " in a code block, word for word:\n" + AclRedis.rulesText());
    }

    /** A user named {@code name} with the rule set of {@code user} less {@code revoked} (such as {@code -xadd}). */
    private String userWithout(String user, String name, String revoked) {
        AclRedis.createUsers(redis, List.of(AclRedis.rule(user).replace("SETUSER " + user + " ", "SETUSER " + name + " ")
                + " " + revoked));
        return name;
    }

    private Binomic connect(String user, boolean prepareQueues) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(AclRedis.url(redis, user)).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).build()).build();
        return Binomic.builder().config(config).prepareQueues(prepareQueues).build().start();
    }

    private static void assertOneLine(String message) {
        assertFalse(message.contains("\n") || message.contains("redis.call") || message.contains("params:")
                || message.contains("channel:"), message);
    }

    @Test
    void aMissingCommandIsNamedWithTheUserAndTheFix() {
        String user = userWithout(AclRedis.PRODUCER, "producer-without-xadd", "-xadd");
        Task<String, Void> plain = Task.builder("plain", String.class).queue(queue).build();
        try (Binomic producer = connect(user, true)) {
            BrokerException e = assertThrows(BrokerException.class, () -> producer.submit(plain, "a"));
            assertTrue(e.getMessage().contains("refused enqueue on queue '" + queue + "'")
                    && e.getMessage().contains("ACL user 'producer-without-xadd' lacks command xadd (NOPERM)")
                    && e.getMessage().contains("ACL SETUSER producer-without-xadd +xadd")
                    && e.getMessage().contains("module-info-docs/redis.md"), e.getMessage());
            assertOneLine(e.getMessage());
        }
        assertEquals(0L, redis.call("XLEN", "binomic:{" + queue + "}:stream"));
    }

    @Test
    void aCommandMissingInsideAScriptIsNamedFromTheLineRedisGives() {
        String user = userWithout(AclRedis.READER, "reader-without-xlen", "-xlen");
        try (Binomic reader = connect(user, false)) {
            BrokerException e = assertThrows(BrokerException.class, () -> reader.queueStats(queue));
            String m = e.getMessage();
            assertTrue(m.contains("refused stats of '" + queue + "'")
                    && m.contains("ACL user 'reader-without-xlen' lacks command xlen (Lua script stats.lua calls it on line ")
                    && m.contains("ACL SETUSER reader-without-xlen +xlen;"), m);
            assertOneLine(m);
        }
    }

    @Test
    void aStartThatMayNotCreateTheQueuesNamesTheMissingSubcommand() {
        String user = userWithout(AclRedis.PRODUCER, "producer-without-xgroup-create", "-xgroup|create");
        BrokerException e = assertThrows(BrokerException.class, () -> connect(user, true).close());
        assertTrue(e.getMessage().contains("refused the start (creating the stream and group of queues [" + queue + "])")
                && e.getMessage().contains("lacks command xgroup|create")
                && e.getMessage().contains("ACL SETUSER producer-without-xgroup-create +xgroup|create"), e.getMessage());
        assertOneLine(e.getMessage());
    }
}
