package io.binomic.redis.internal;

import io.binomic.api.BrokerConfig;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;

/**
 * The URLs of a Redis Cluster and of a Sentinel set-up, for users who need no Redisson YAML file:
 * <ul>
 *   <li>{@code redis+cluster://[user:password@]host:port,host:port,...}: seed nodes of a Cluster
 *   (any few of its nodes; the rest are discovered);</li>
 *   <li>{@code redis+sentinel://[user:password@]host:port,host:port,.../masterName[/database]}: the
 *   sentinels, and the name they monitor the primary by; the user and password are the data nodes'.</li>
 * </ul>
 * {@code rediss+cluster} and {@code rediss+sentinel} use TLS. Reads go to the masters (replicas
 * lag), commands are retried through a failover like the single-server set-up's.
 */
final class TopologyUrls {
    static final Set<String> SCHEMES = Set.of("redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel");
    private static final String CLUSTER_FORM = "redis+cluster://[user:password@]host:port,host:port,...";
    private static final String SENTINEL_FORM = "redis+sentinel://[user:password@]host:port,host:port,.../masterName[/database]";

    private TopologyUrls() {
    }

    /** The Redisson set-up of a cluster or sentinel URL; a malformed one is refused with the expected form. */
    static RedissonSetup setup(BrokerConfig config, RedissonSetup.ReplicaWait replicaWait) {
        String scheme = config.scheme();
        boolean tls = scheme.startsWith("rediss");
        boolean cluster = scheme.endsWith("+cluster");
        String form = cluster ? CLUSTER_FORM : SENTINEL_FORM;
        String rest = config.url().substring(config.url().indexOf("://") + 3);
        String userInfo = null;
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
        }
        String hostList = rest;
        String path = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            hostList = rest.substring(0, slash);
            path = rest.substring(slash + 1);
        }
        List<String> addresses = new ArrayList<>();
        for (String hostPort : hostList.split(",")) {
            String h = hostPort.strip();
            int colon = h.lastIndexOf(':');
            if (h.isEmpty() || colon <= 0 || colon == h.length() - 1 || !h.substring(colon + 1).chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl() + "': '" + h
                        + "' is not host:port; expected " + form);
            }
            addresses.add((tls ? "rediss://" : "redis://") + h);
        }
        Config redisson = RedissonSetup.newConfig();
        BaseMasterSlaveServersConfig<?> servers;
        String target;
        if (cluster) {
            if (!path.isEmpty() && !path.equals("/")) {
                throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl() + "' has path '/" + path
                        + "'; a Redis Cluster has only database 0 and no path: expected " + form);
            }
            ClusterServersConfig c = redisson.useClusterServers();
            addresses.forEach(c::addNodeAddress);
            // Slot moves and failovers are learnt from MOVED replies at once, and from this scan.
            c.setScanInterval(1000);
            servers = c;
            target = "the Redis Cluster of " + hostList;
        } else {
            String[] parts = path.split("/");
            if (parts.length < 1 || parts[0].isBlank() || parts.length > 2) {
                throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl()
                        + "' must name the primary the sentinels monitor (the <name> of 'sentinel monitor <name> ...'); expected "
                        + form + ", e.g. redis+sentinel://10.0.0.11:26379,10.0.0.12:26379/mymaster");
            }
            SentinelServersConfig s = redisson.useSentinelServers();
            addresses.forEach(s::addSentinelAddress);
            s.setMasterName(URLDecoder.decode(parts[0], StandardCharsets.UTF_8));
            int database = config.database();
            if (parts.length == 2 && database == 0) {
                try {
                    database = Integer.parseInt(parts[1]);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl() + "': '" + parts[1]
                            + "' is not a database number; expected " + form, e);
                }
            }
            s.setDatabase(database);
            s.setScanInterval(1000);
            servers = s;
            target = "the primary '" + parts[0] + "' of the sentinels " + hostList;
        }
        servers.setReadMode(ReadMode.MASTER);
        RedissonSetup.timeouts(servers, config);
        RedissonSetup.credentials(config, userInfo, redisson);
        if (tls) {
            RedissonSetup.tls(redisson, config);
        }
        return new RedissonSetup(redisson, target, () -> { }, replicaWait);
    }

    /**
     * A Cluster or Sentinel YAML file that leaves reads on the replicas (Redisson's default,
     * {@code readMode: SLAVE}) makes the CLI, dead-letter listings and stats read a lagging copy:
     * said once, as a WARNING naming the fix. Nothing is changed: the file may mean it.
     */
    static void warnIfReadsFromReplicas(Config redisson, String yaml) {
        ReadMode mode = redisson.isClusterConfig() ? redisson.useClusterServers().getReadMode()
                : redisson.isSentinelConfig() ? redisson.useSentinelServers().getReadMode() : ReadMode.MASTER;
        if (mode != ReadMode.MASTER) {
            System.getLogger(TopologyUrls.class.getName()).log(System.Logger.Level.WARNING, "the Redisson configuration {0} reads"
                    + " from replicas (readMode {1}): listings and stats may lag behind what was written; add readMode: \"MASTER\""
                    + " to its clusterServersConfig or sentinelServersConfig", yaml, mode);
        }
    }
}
