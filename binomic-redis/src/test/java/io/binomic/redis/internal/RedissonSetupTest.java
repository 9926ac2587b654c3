package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerAccessRefusedException;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import java.net.ConnectException;
import java.time.Duration;
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
        IllegalArgumentException noHost = assertThrows(IllegalArgumentException.class, () -> setup("redis:///0"));
        assertTrue(noHost.getMessage().contains("expected redis://[user:password@]host[:port][/database]"), noHost.getMessage());
        IllegalArgumentException badDb = assertThrows(IllegalArgumentException.class, () -> setup("redis://h:6379/zero"));
        assertTrue(badDb.getMessage().contains("the path of a Redis URL is the database number"), badDb.getMessage());
        assertTrue(noHost.getMessage().contains("'redis:///0' has no host"), noHost.getMessage());
        IllegalArgumentException badPort = assertThrows(IllegalArgumentException.class, () -> setup("redis://user:secret@127.0.0.1:643l"));
        assertTrue(badPort.getMessage().contains("has a port that is not a number ('643l')"), badPort.getMessage());
        assertFalse(badPort.getMessage().contains("secret"), badPort.getMessage());
    }

    @Test
    void aTrustStoreWithAUrlWithoutTlsIsRefusedRatherThanIgnored() {
        for (String url : new String[] {"redis://h:6379", "redis+cluster://h:7000,h:7001", "redis+sentinel://h:26379/mymaster"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RedissonSetup.of(BrokerConfig.builder().url(url).options(java.util.Map.of("tls.truststore", "/etc/trust.p12")).build()));
            assertTrue(e.getMessage().contains("BrokerConfig option tls.truststore is set, but BrokerConfig.url '" + url
                    + "' connects without TLS"), e.getMessage());
            assertTrue(e.getMessage().contains("use rediss"), e.getMessage());
        }
        // with TLS the option is taken (its file is read at connect time)
        RedissonSetup.of(BrokerConfig.builder().url("rediss+cluster://h:7000").options(java.util.Map.of("tls.truststore.password", "x")).build());
    }

    @Test
    void passwordsNeverAppearInErrors() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> setup("redis://u:topsecret@h:6379/x"));
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
        assertEquals("Redis at 127.0.0.1:6390 refused the password for user default: WRONGPASS invalid username-password pair;"
                + " check BrokerConfig.password and BrokerConfig.username (or user:password@ in BrokerConfig.url)", auth.getMessage());
    }

    /** Found by an outside tester: redis:// to a TLS port was asked only whether redis-server runs. */
    @Test
    void aResetConnectionAsksWhetherThePortSpeaksTls() {
        BrokerException reset = setup("redis://127.0.0.1:6390").startFailure(new IllegalStateException("x",
                new java.net.SocketException("Connection reset")));
        assertEquals("cannot connect to Redis at 127.0.0.1:6390: Connection reset; is redis-server running, and is the port a TLS one"
                + " (then rediss://)? check BrokerConfig.url", reset.getMessage());
    }

    /** Found by an outside tester: a frozen Redis was reported as not running. */
    @Test
    void aServerThatAcceptsButDoesNotAnswerIsReportedAsNotAnsweringNotAsDown() {
        BrokerException frozen = setup("redis://127.0.0.1:6390").startFailure(new IllegalStateException(
                "no answer within 1000 ms (BrokerConfig.connectTimeout)", new java.net.SocketTimeoutException("Read timed out")));

        assertEquals("Redis at 127.0.0.1:6390 accepted the connection but did not answer: no answer within 1000 ms"
                + " (BrokerConfig.connectTimeout); is it frozen or overloaded? check BrokerConfig.url, or raise BrokerConfig.connectTimeout",
                frozen.getMessage());
    }

    /** Found by a user: rediss:// at a plain port was asked whether Redis is frozen, and told to raise connectTimeout. */
    @Test
    void aTlsHandshakeWithoutAnswerSaysThePortMayNotSpeakTls() {
        BrokerException plain = setup("rediss://127.0.0.1:6390").startFailure(new IllegalStateException(
                "no answer to the TLS handshake within 1000 ms (BrokerConfig.connectTimeout), and the port answers plain Redis (no TLS)",
                new java.net.SocketTimeoutException("Read timed out")));
        BrokerException silent = setup("rediss://127.0.0.1:6390").startFailure(new IllegalStateException(
                "no answer to the TLS handshake within 1000 ms (BrokerConfig.connectTimeout)", new java.net.SocketTimeoutException("Read timed out")));

        assertEquals("Redis at 127.0.0.1:6390 did not answer the TLS handshake within 1000 ms (BrokerConfig.connectTimeout), and the port"
                + " answers plain Redis (no TLS); the server may not speak TLS on this port: use redis:// or the server's TLS port in"
                + " BrokerConfig.url", plain.getMessage());
        assertEquals("Redis at 127.0.0.1:6390 did not answer the TLS handshake within 1000 ms (BrokerConfig.connectTimeout); the server"
                + " may not speak TLS on this port: use redis:// or the server's TLS port in BrokerConfig.url (if it is a TLS port of a"
                + " frozen or overloaded server, raise BrokerConfig.connectTimeout)", silent.getMessage());
        // A plain answer is a setting no retry changes (the master refuses to start on it); silence may be an outage.
        assertInstanceOf(BrokerAccessRefusedException.class, plain);
        assertFalse(silent instanceof BrokerAccessRefusedException, silent.getClass().getName());
    }

    /** Found by an outside tester: port 99999 was reported as a connection failure ("is redis-server running?"). */
    @Test
    void aPortOutOfRangeIsAnInvalidUrl() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> setup("redis://127.0.0.1:99999"));
        assertEquals("BrokerConfig.url 'redis://127.0.0.1:99999' has port 99999, which is not a port (1-65535); expected"
                + " redis://[user:password@]host[:port][/database], e.g. redis://127.0.0.1:6379", e.getMessage());
    }

    /** Found by an outside tester: Redisson's reply to SELECT carried its channel and promise, and the running hint. */
    @Test
    void aDatabaseRefusedByRedissonIsNamedWithoutItsInternals() {
        BrokerException e = setup("redis://127.0.0.1:6390/99").startFailure(new IllegalStateException("x", new RuntimeException(
                "ERR DB index is out of range. channel: [id: 0xbd34bd23, L:/127.0.0.1:54546 - R:127.0.0.1/127.0.0.1:6412] command:"
                        + " (SELECT), params: [99], promise: java.util.concurrent.CompletableFuture@63310115[Not completed]")));
        assertEquals("Redis at 127.0.0.1:6390 refused the database: ERR DB index is out of range; check the /database of BrokerConfig.url (or BrokerConfig.database)",
                e.getMessage());
        BrokerException preflight = setup("redis://127.0.0.1:6390/99").startFailure(new IllegalStateException(
                "Redis refused database 99 (ERR DB index is out of range): it has 16, 0-15"));
        assertEquals("Redis at 127.0.0.1:6390 refused database 99 (ERR DB index is out of range): it has 16, 0-15;"
                + " check the /database of BrokerConfig.url (or BrokerConfig.database)", preflight.getMessage());
    }

    private static RedissonSetup withOptions(java.util.Map<String, String> options) {
        return RedissonSetup.of(BrokerConfig.builder().url("redis://h:6379").options(options).build());
    }

    @Test
    void waitingForReplicasIsOffUnlessAskedFor() {
        assertEquals(RedissonSetup.ReplicaWait.OFF, setup("redis://h:6379").replicaWait());
        assertEquals(false, withOptions(java.util.Map.of("wait.replicas", "0", "wait.timeout", "2s")).replicaWait().on());
    }

    @Test
    void waitReplicasAndTimeoutAreRead() {
        assertEquals(new RedissonSetup.ReplicaWait(2, java.time.Duration.ofMillis(250)),
                withOptions(java.util.Map.of("wait.replicas", "2", "wait.timeout", "250ms")).replicaWait());
        assertEquals(new RedissonSetup.ReplicaWait(1, java.time.Duration.ofSeconds(1)),
                withOptions(java.util.Map.of("wait.replicas", "1")).replicaWait(), "the timeout defaults to 1 s");
        assertEquals(java.time.Duration.ofSeconds(3),
                withOptions(java.util.Map.of("wait.replicas", "1", "wait.timeout", "PT3S")).replicaWait().timeout());
    }

    @Test
    void badWaitOptionsAreRefusedNamingTheKeyAndAGoodValue() {
        IllegalArgumentException replicas = assertThrows(IllegalArgumentException.class,
                () -> withOptions(java.util.Map.of("wait.replicas", "one")));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> withOptions(java.util.Map.of("wait.replicas", "-1")));
        IllegalArgumentException timeout = assertThrows(IllegalArgumentException.class,
                () -> withOptions(java.util.Map.of("wait.replicas", "1", "wait.timeout", "soon")));
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> withOptions(java.util.Map.of("wait.replicas", "1", "wait.timeout", "0ms")));
        IllegalArgumentException alone = assertThrows(IllegalArgumentException.class,
                () -> withOptions(java.util.Map.of("wait.timeout", "1s")));

        assertEquals("BrokerConfig option wait.replicas must be a whole number >= 0 (the replicas that must confirm each write;"
                + " 0 = do not wait), was 'one'; e.g. broker.option.wait.replicas = 1", replicas.getMessage());
        assertTrue(negative.getMessage().contains("was '-1'"), negative.getMessage());
        assertEquals("BrokerConfig option wait.timeout must be a positive duration such as 500ms, 2s or PT2S, was 'soon';"
                + " e.g. broker.option.wait.timeout = 1s", timeout.getMessage());
        assertTrue(zero.getMessage().contains("was '0ms'"), zero.getMessage());
        assertEquals("BrokerConfig option wait.timeout is set but wait.replicas is not, so nothing waits: set"
                + " broker.option.wait.replicas = 1 (or more; 0 turns waiting off), or remove wait.timeout", alone.getMessage());
    }

    @Test
    void waitOptionsApplyToARedissonYamlFileToo() throws Exception {
        java.nio.file.Path yaml = java.nio.file.Files.createTempFile("redisson-", ".yaml");
        java.nio.file.Files.writeString(yaml, """
                sentinelServersConfig:
                  masterName: "binomic"
                  sentinelAddresses:
                    - "redis://127.0.0.1:26379"
                """);
        RedissonSetup setup = withOptions(java.util.Map.of("redisson.config", yaml.toString(), "wait.replicas", "1"));

        assertTrue(setup.redisson().isSentinelConfig());
        assertEquals(1, setup.replicaWait().replicas());
    }

    /** Every duration option reads the same forms: a short one, or ISO-8601. */
    @Test
    void aDurationOptionTakesShortAndIsoFormsAndNamesItselfWhenBad() {
        assertEquals(Duration.ofSeconds(5), RedissonSetup.positiveDuration("eviction.recheck", "5s", "60s"));
        assertEquals(Duration.ofMillis(200), RedissonSetup.positiveDuration("eviction.recheck", "PT0.2S", "60s"));
        assertEquals(Duration.ofMinutes(2), RedissonSetup.positiveDuration("eviction.recheck", " 2m ", "60s"));
        for (String bad : new String[] {"60", "0s", "-PT5S", "soon"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RedissonSetup.positiveDuration("eviction.recheck", bad, "60s"));
            assertTrue(e.getMessage().contains("eviction.recheck") && e.getMessage().contains("'" + bad + "'")
                    && e.getMessage().contains("broker.option.eviction.recheck = 60s"), e.getMessage());
        }
    }
}
