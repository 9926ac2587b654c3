package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.redisson.client.RedisResponseTimeoutException;

/**
 * What a write sent once says when it fails, with each reply Redisson can give a try: a batch's
 * submit here, whose failure names the batch. A try that may have reached Redis is never sent
 * again; one that cannot have is, within the bound.
 */
class WriteOnceFailureTest {
    private static final UUID BATCH = UUID.randomUUID();
    private static final WriteOnce.Effect CREATE = WriteOnce.Effect.create("batch id " + BATCH, "submitting again makes a second");

    private final RedisContext redis = new RedisContext(BrokerConfig.builder().url("redis://127.0.0.1:1")
            .commandTimeout(Duration.ofMillis(600)).build());
    private final AtomicInteger tries = new AtomicInteger();

    private BrokerException send(RuntimeException eachTry) {
        return assertThrows(BrokerException.class, () -> redis.writeOnce.send("submit batch " + BATCH, CREATE, batch -> { },
                timeout -> {
                    tries.incrementAndGet();
                    return CompletableFuture.failedFuture(eachTry);
                }));
    }

    @Test
    void aTryWithoutAReplyMayHaveCreatedItAndIsNotSentAgain() {
        BrokerException e = send(new RedisResponseTimeoutException("Redis server response timeout (350 ms) occurred"));
        assertEquals(1, tries.get());
        assertTrue(e.getMessage().contains("did not answer the submit batch " + BATCH), e.getMessage());
        assertTrue(e.getMessage().contains(". It may have been created once, with batch id " + BATCH + ", and is not sent again,"
                + " by this call or later; submitting again makes a second"), e.getMessage());
    }

    @Test
    void triesThatNeverLeftTheClientAreSentAgainAndThenSayItWasNotCreated() {
        BrokerException e = send(new RedisConnectionException("Unable to connect to: redis://127.0.0.1:1",
                new ConnectException("Connection refused")));
        assertTrue(tries.get() >= 2, tries + " tries");
        assertTrue(e.getMessage().contains(". It was not created (batch id " + BATCH + "): no try reached Redis ("), e.getMessage());
        assertFalse(e.getMessage().contains("may have been"), e.getMessage());
    }

    /** Found by an outside tester: a submit refused by a restarting Redis did not say whether it was enqueued. */
    @Test
    void aLoadingReplySaysNothingTookEffect() {
        BrokerException e = send(new RedisException("LOADING Redis is loading the dataset in memory"));
        assertEquals(1, tries.get());
        assertTrue(e.getMessage().contains("Redis submit batch " + BATCH + " failed at 127.0.0.1:1: LOADING Redis is loading the dataset"
                + " in memory; Redis refused it before running it, while loading its data after a restart: nothing of it took effect"),
                e.getMessage());
    }

    @Test
    void anErrorReplyIsRedisOwnAndNotSentAgain() {
        BrokerException e = send(new RedisException("ERR something refused"));
        assertEquals(1, tries.get());
        assertTrue(e.getMessage().contains("Redis submit batch " + BATCH + " failed at 127.0.0.1:1: ERR something refused"),
                e.getMessage());
    }
}
