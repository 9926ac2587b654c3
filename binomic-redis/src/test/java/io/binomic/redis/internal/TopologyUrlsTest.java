package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;

/** {@code redis+cluster://} and {@code redis+sentinel://} URLs become Redisson Cluster and Sentinel settings. */
class TopologyUrlsTest {

    private static RedissonSetup setup(String url) {
        return RedissonSetup.of(BrokerConfig.builder().url(url).build());
    }

    @Test
    void clusterUrlListsTheSeedNodesAndReadsFromMasters() {
        RedissonSetup setup = setup("redis+cluster://ada:p%40ss@10.0.0.1:7000,10.0.0.2:7001");
        assertTrue(setup.redisson().isClusterConfig());
        ClusterServersConfig c = setup.redisson().useClusterServers();

        assertEquals(List.of("redis://10.0.0.1:7000", "redis://10.0.0.2:7001"), c.getNodeAddresses());
        assertEquals(ReadMode.MASTER, c.getReadMode());
        assertEquals("ada", setup.redisson().getUsername());
        assertEquals("p@ss", setup.redisson().getPassword());
        assertEquals("the Redis Cluster of 10.0.0.1:7000,10.0.0.2:7001", setup.target());
    }

    @Test
    void tlsClusterUrlUsesRediss() {
        ClusterServersConfig c = setup("rediss+cluster://h1:7000").redisson().useClusterServers();
        assertEquals(List.of("rediss://h1:7000"), c.getNodeAddresses());
    }

    @Test
    void sentinelUrlNamesTheSentinelsThePrimaryAndTheDatabase() {
        RedissonSetup setup = setup("redis+sentinel://:secret@s1:26379,s2:26380/mymaster/3");
        assertTrue(setup.redisson().isSentinelConfig());
        SentinelServersConfig s = setup.redisson().useSentinelServers();

        assertEquals(List.of("redis://s1:26379", "redis://s2:26380"), s.getSentinelAddresses());
        assertEquals("mymaster", s.getMasterName());
        assertEquals(3, s.getDatabase());
        assertEquals(ReadMode.MASTER, s.getReadMode());
        assertEquals("secret", setup.redisson().getPassword());
    }

    @Test
    void badTopologyUrlsAreRefusedWithTheExpectedFormAndNoPassword() {
        IllegalArgumentException noName = assertThrows(IllegalArgumentException.class, () -> setup("redis+sentinel://:topsecret@s1:26379"));
        assertTrue(noName.getMessage().contains("must name the primary the sentinels monitor"), noName.getMessage());
        assertFalse(noName.getMessage().contains("topsecret"), noName.getMessage());
        IllegalArgumentException noPort = assertThrows(IllegalArgumentException.class, () -> setup("redis+cluster://h1:7000,h2"));
        assertTrue(noPort.getMessage().contains("'h2' is not host:port; expected redis+cluster://"), noPort.getMessage());
        IllegalArgumentException database = assertThrows(IllegalArgumentException.class, () -> setup("redis+cluster://h1:7000/2"));
        assertTrue(database.getMessage().contains("a Redis Cluster has only database 0"), database.getMessage());
    }

    @Test
    void theProvidersServeTheTopologySchemes() {
        assertTrue(new RedisBrokerProvider().schemes().containsAll(TopologyUrls.SCHEMES));
        assertTrue(new RedisSchedulerProvider().schemes().containsAll(TopologyUrls.SCHEMES));
    }
}
