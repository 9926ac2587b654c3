package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;
import org.redisson.config.SingleServerConfig;

/** How a BrokerConfig becomes Redisson settings, and how connection failures are worded. */
class RedissonSetupTest {

    private static RedissonSetup setup(String url) {
        return RedissonSetup.of(BrokerConfig.builder().url(url).build());
    }

    @Test
    void urlGivesAddressDatabaseAndDecodedCredentials() {
        RedissonSetup setup = setup("redis://ada:p%40ss@cache.internal:6380/2");
        SingleServerConfig server = setup.redisson().useSingleServer();

        assertEquals("redis://cache.internal:6380", server.getAddress());
        assertEquals(2, server.getDatabase());
        assertEquals("ada", setup.redisson().getUsername());
        assertEquals("p@ss", setup.redisson().getPassword());
        assertEquals("cache.internal:6380", setup.target());
    }

    @Test
    void explicitSettingsWinOverTheUrlAndTheDefaultPortIs6379() {
        RedissonSetup setup = RedissonSetup.of(BrokerConfig.builder().url("rediss://:fromurl@h/1")
                .password("explicit").database(5).build());

        assertEquals("rediss://h:6379", setup.redisson().useSingleServer().getAddress());
        assertEquals("explicit", setup.redisson().getPassword());
        assertEquals(5, setup.redisson().useSingleServer().getDatabase());
    }

    @Test
    void badUrlsAreRefusedWithTheExpectedForm() {
        BrokerException noHost = assertThrows(BrokerException.class, () -> setup("redis:///0"));
        assertTrue(noHost.getMessage().contains("expected redis://[user:password@]host[:port][/database]"), noHost.getMessage());
        BrokerException badDb = assertThrows(BrokerException.class, () -> setup("redis://h:6379/zero"));
        assertTrue(badDb.getMessage().contains("the path of a Redis URL is the database number"), badDb.getMessage());
    }

    @Test
    void passwordsNeverAppearInErrors() {
        BrokerException e = assertThrows(BrokerException.class, () -> setup("redis://u:topsecret@h:6379/x"));
        assertTrue(!e.getMessage().contains("topsecret"), e.getMessage());
    }

    @Test
    void startFailureNamesTargetCauseAndFix() {
        RedissonSetup setup = setup("redis://127.0.0.1:6390");

        BrokerException refused = setup.startFailure(new IllegalStateException("x",
                new ConnectException("Connection refused: /127.0.0.1:6390")));
        BrokerException auth = setup.startFailure(new BrokerException("WRONGPASS invalid username-password pair"));

        assertEquals("cannot connect to Redis at 127.0.0.1:6390: Connection refused; is redis-server running? check BrokerConfig.url",
                refused.getMessage());
        assertEquals("cannot connect to Redis at 127.0.0.1:6390: WRONGPASS invalid username-password pair; check"
                + " BrokerConfig.username and BrokerConfig.password (or user:password@ in BrokerConfig.url)", auth.getMessage());
    }
}
