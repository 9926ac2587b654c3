package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.redisson.client.RedisReconnectedException;
import org.redisson.client.RedisResponseTimeoutException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.WriteRedisConnectionException;

/**
 * An enqueue is sent again only when Redisson's failure proves it never reached Redis: sent again
 * after a late reply or a lost connection, it could run twice.
 */
class WriteNotSentTest {

    @Test
    void noConnectionOrAFailedWriteIsNotSent() {
        assertTrue(WriteOnce.notSent(new RedisConnectionException("Unable to connect to: redis://127.0.0.1:6390",
                new ConnectException("Connection refused"))));
        assertTrue(WriteOnce.notSent(new WriteRedisConnectionException("Channel has been closed! Can't write command")));
        assertTrue(WriteOnce.notSent(new RedisTimeoutException("Unable to acquire connection! Increase connection pool size.")));
        assertTrue(WriteOnce.notSent(new RedisTimeoutException("Command still hasn't been written into connection! Check CPU")));
        assertTrue(WriteOnce.notSent(new CompletionException(new RedisConnectionException("Unable to connect to: x"))));
        assertTrue(WriteOnce.notSent(new RedisException("Unexpected exception while processing command",
                new ConnectException("Connection refused"))));
    }

    @Test
    void aLateReplyALostConnectionOrAnythingElseMayHaveRun() {
        assertFalse(WriteOnce.notSent(new RedisResponseTimeoutException("Redis server response timeout (600 ms) occurred")));
        assertFalse(WriteOnce.notSent(new RedisReconnectedException("Channel has been reconnected")));
        assertFalse(WriteOnce.notSent(new RedisTimeoutException("Redis server response timeout")));
        assertFalse(WriteOnce.notSent(new RedisException("Unexpected exception while processing command")));
        assertFalse(WriteOnce.notSent(new CompletionException(new RedisResponseTimeoutException("Redis server response"
                + " timeout"))));
    }
}
