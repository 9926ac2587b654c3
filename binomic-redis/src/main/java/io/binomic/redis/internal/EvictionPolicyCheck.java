package io.binomic.redis.internal;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.BrokerHealthReport;
import io.binomic.api.UnsafeBrokerSettingException;
import io.binomic.api.spi.BrokerHealthReport.ServerSetting;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

/**
 * Redis' {@code maxmemory-policy} on every primary, which decides what Redis does when memory is
 * full: refuse writes ({@code noeviction}, the only policy under which Binomic loses nothing) or
 * delete keys it picks. {@code allkeys-*} may delete a queue's stream with its jobs, without a
 * word; {@code volatile-*} deletes only keys with a time to live, which here are ended job records,
 * uniqueness and debounce claims, tick claims, rate-limit windows and activity buckets, never a
 * stream or a delayed set. Both are refused at start unless {@value #OPTION} accepts the risk.
 *
 * <p>Read with {@code CONFIG GET} at start and again every {@link #RECHECK_EVERY} or {@value #RECHECK_OPTION} (on a virtual
 * thread started by a broker call, so no call waits for it and none costs a round trip more), which
 * also catches a failover to a primary with another policy. A change to an evicting policy is
 * logged once per change and reported by {@link #serverSettings()}. A server that refuses {@code CONFIG}
 * (managed Redis often renames or forbids it, and the documented ACL users lack it) is read through
 * {@code INFO memory}; one that refuses both is logged once and not held against the start.
 */
final class EvictionPolicyCheck implements BrokerHealthReport {
    private static final System.Logger LOG = System.getLogger(RedisBroker.class.getName());

    /** Option key: {@code true} starts even when Redis may evict Binomic's keys. */
    static final String OPTION = "eviction.allowed";

    static final String SETTING = "maxmemory-policy";
    /** The same setting as {@code INFO memory} names it. */
    private static final String INFO_FIELD = "maxmemory_policy";
    static final Duration RECHECK_EVERY = Duration.ofSeconds(60);
    /** Option key: how often the policy is read again ({@code 60s} by default). */
    static final String RECHECK_OPTION = "eviction.recheck";

    private final boolean allowed;
    private final Duration recheckEvery;
    private final String target;
    private volatile List<ServerSetting> settings = List.of();
    private volatile long nextCheckNanos;
    private final AtomicBoolean checking = new AtomicBoolean();
    /** The policy last logged per server ("" for unreadable), so each change is logged once. */
    private final Map<String, String> logged = new ConcurrentHashMap<>();

    EvictionPolicyCheck(BrokerConfig config, String target) {
        this.allowed = allowed(config);
        this.target = target;
        this.recheckEvery = recheckEvery(config);
    }

    private static Duration recheckEvery(BrokerConfig config) {
        String text = config.options().get(RECHECK_OPTION);
        return text == null ? RECHECK_EVERY : RedissonSetup.positiveDuration(RECHECK_OPTION, text, "60s");
    }

    private static boolean allowed(BrokerConfig config) {
        String text = config.options().get(OPTION);
        if (text == null) {
            return false;
        }
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("BrokerConfig option " + OPTION + " must be true or false, was '" + text
                    + "'; e.g. broker.option." + OPTION + " = true to start although Redis may evict Binomic's keys");
        };
    }

    /** What {@value #OPTION} accepts, or empty for {@code noeviction} and any policy this check does not know. */
    static Optional<String> risk(String policy) {
        String p = policy.toLowerCase(Locale.ROOT);
        if (p.startsWith("allkeys-")) {
            return Optional.of("when memory is full Redis deletes any key, queued jobs and their streams included, without an error");
        }
        if (p.startsWith("volatile-")) {
            return Optional.of("when memory is full Redis deletes keys that have a time to live: ended job records, uniqueness"
                    + " and debounce claims, tick claims and rate-limit windows may vanish before they expire (a unique job may"
                    + " run twice, a tick fire twice, a rate limit let more through); queued jobs are kept (streams have no time to live)");
        }
        return Optional.empty();
    }

    /**
     * Reads the policy of every primary of the new client; throws when one may evict and
     * {@value #OPTION} does not accept it.
     *
     * @throws UnsafeBrokerSettingException when a primary may evict and {@value #OPTION} does not accept it
     */
    void atStart(RedissonClient client, Config redisson) {
        List<ServerSetting> read = read(client, redisson);
        settings = read;
        nextCheckNanos = System.nanoTime() + recheckEvery.toNanos();
        List<String> refused = new ArrayList<>();
        for (ServerSetting s : read) {
            if (s.value().isPresent() && s.warning().isPresent() && !allowed) {
                refused.add(s.server() + " has " + SETTING + " " + s.value().orElseThrow() + ": " + s.warning().get());
            }
        }
        if (!refused.isEmpty()) {
            throw new UnsafeBrokerSettingException("Redis at " + target + " may evict Binomic's keys: " + String.join("; ", refused)
                    + ". Set " + SETTING + " noeviction (CONFIG SET " + SETTING + " noeviction, or in redis.conf), or accept the"
                    + " risk with BrokerConfig option " + OPTION + " = true (broker.option." + OPTION + " = true)");
        }
        report(read);
    }

    /** Starts a re-check on a virtual thread when one is due; costs a clock read otherwise. */
    void recheckIfDue(Supplier<RedissonClient> client, Config redisson) {
        if (System.nanoTime() - nextCheckNanos < 0 || !checking.compareAndSet(false, true)) {
            return;
        }
        Thread.ofVirtual().name("binomic-eviction-policy-check").start(() -> {
            try {
                List<ServerSetting> read = read(client.get(), redisson);
                report(read);
                settings = read;
            } catch (RuntimeException e) {
                // closed meanwhile, or Redis unreachable: the broker's own calls report that
                LOG.log(Level.DEBUG, "reading " + SETTING + " of Redis at " + target + " failed: " + e.getMessage());
            } finally {
                nextCheckNanos = System.nanoTime() + recheckEvery.toNanos();
                checking.set(false);
            }
        });
    }

    /** The policy of every primary, as last read. */
    @Override
    public List<ServerSetting> serverSettings() { return settings; }

    /** Logs each server whose policy is evicting or unreadable, once per change. */
    private void report(List<ServerSetting> read) {
        for (ServerSetting s : read) {
            String value = s.value().orElse("");
            String before = logged.put(s.server(), value);
            if (value.equals(before)) {
                continue;
            }
            if (s.value().isEmpty()) {
                LOG.log(Level.WARNING, "could not read " + SETTING + " of Redis at " + s.server() + " (" + s.warning().orElse("")
                        + "): Binomic cannot tell whether Redis may evict its keys; make sure the policy is noeviction");
            } else if (s.warning().isPresent()) {
                LOG.log(Level.WARNING, "Redis at " + s.server() + " has " + SETTING + " " + value + (before == null ? "" : " (was " + before + ")")
                        + ": " + s.warning().get() + (allowed ? " (accepted by BrokerConfig option " + OPTION + ")"
                        : "; set it to noeviction"));
            } else if (before != null) {
                LOG.log(Level.INFO, "Redis at " + s.server() + " has " + SETTING + " " + value + " again (was "
                        + (before.isEmpty() ? "unreadable" : before) + ")");
            }
        }
    }

    private List<ServerSetting> read(RedissonClient client, Config redisson) {
        List<ServerSetting> read = new ArrayList<>();
        for (RedisNode node : primaries(client, redisson)) {
            String server = address(node.getAddr());
            String policy;
            String unread;
            try {
                policy = node.getConfig(SETTING).get(SETTING);
                unread = "CONFIG GET returned no value";
            } catch (RuntimeException e) {
                if (RedisContext.serverUnreachable(e)) {
                    throw e;
                }
                // Managed Redis and least-privilege users are often refused CONFIG (it also shows
                // requirepass) but may read INFO, which shows the policy and no secret.
                unread = "CONFIG GET refused: " + RedissonSetup.rootMessage(e);
                try {
                    policy = node.info(RedisNode.InfoSection.MEMORY).get(INFO_FIELD);
                } catch (RuntimeException infoRefused) {
                    if (RedisContext.serverUnreachable(infoRefused)) {
                        throw infoRefused;
                    }
                    policy = null;
                    unread += "; INFO memory refused: " + RedissonSetup.rootMessage(infoRefused);
                }
            }
            if (policy == null) {
                // The warning says so, and the start goes on.
                read.add(new ServerSetting(SETTING, server, Optional.empty(), Optional.of(unread)));
            } else {
                read.add(new ServerSetting(SETTING, server, Optional.of(policy), risk(policy)));
            }
        }
        return List.copyOf(read);
    }

    private static List<? extends RedisNode> primaries(RedissonClient client, Config redisson) {
        if (redisson.isClusterConfig()) {
            return List.copyOf(client.getRedisNodes(RedisNodes.CLUSTER).getMasters());
        }
        if (redisson.isSentinelConfig()) {
            return List.of(client.getRedisNodes(RedisNodes.SENTINEL_MASTER_SLAVE).getMaster());
        }
        if (redisson.isSingleConfig()) {
            return List.of(client.getRedisNodes(RedisNodes.SINGLE).getInstance());
        }
        return List.of(client.getRedisNodes(RedisNodes.MASTER_SLAVE).getMaster());
    }

    private static String address(InetSocketAddress a) { return a.getHostString() + ":" + a.getPort(); }
}
