package io.binomic.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Settings of the auto-configured Binomic client, under {@code binomic.*}: the names of the
 * configuration builders ({@code BinomicConfig}, {@code BrokerConfig}, {@code WorkerConfig},
 * {@code TaskDefaults}) in Spring's kebab case, with their defaults. A name under {@code binomic.}
 * that is none of these fails the start, so a mistyped setting is not silently ignored. Durations
 * take a unit ({@code 10s}, {@code 500ms}, {@code 1m}); a number without one is milliseconds.
 */
@ConfigurationProperties(prefix = "binomic", ignoreUnknownFields = false)
public class BinomicProperties {
    /** Where messages live. */
    @NestedConfigurationProperty
    private final Broker broker = new Broker();
    /** The worker this application runs. */
    @NestedConfigurationProperty
    private final Worker worker = new Worker();
    /** Retry policy and timeout of tasks that do not declare their own. */
    @NestedConfigurationProperty
    private final TaskDefaults taskDefaults = new TaskDefaults();
    /** Binomic's dashboard and /metrics, served on a port of their own. */
    @NestedConfigurationProperty
    private final Dashboard dashboard = new Dashboard();
    /** The transactional outbox, when binomic-jdbc and a DataSource are present. */
    @NestedConfigurationProperty
    private final Outbox outbox = new Outbox();
    /** Whether this application fires CRON and INTERVAL tasks (safe in many processes: each tick is claimed once). */
    private boolean schedulePeriodicTasks = true;
    /** Id of the codec that encodes task arguments: json-jdk or jackson. */
    private String payloadCodec = "json-jdk";
    /**
     * How the test mode of binomic-spring-boot-test (@AutoConfigureBinomicTestMode) runs jobs: manual (they wait
     * for TestMode.drain()) or inline (each runs inside its submit). Read only in such tests.
     */
    private String testMode = "manual";

    public Broker getBroker() {
        return broker;
    }

    public Worker getWorker() {
        return worker;
    }

    public TaskDefaults getTaskDefaults() {
        return taskDefaults;
    }

    public Dashboard getDashboard() {
        return dashboard;
    }

    public Outbox getOutbox() {
        return outbox;
    }

    public boolean isSchedulePeriodicTasks() {
        return schedulePeriodicTasks;
    }

    public void setSchedulePeriodicTasks(boolean schedulePeriodicTasks) {
        this.schedulePeriodicTasks = schedulePeriodicTasks;
    }

    public String getPayloadCodec() {
        return payloadCodec;
    }

    public void setPayloadCodec(String payloadCodec) {
        this.payloadCodec = payloadCodec;
    }

    public String getTestMode() {
        return testMode;
    }

    public void setTestMode(String testMode) {
        this.testMode = testMode;
    }

    /** Where messages live ({@code BrokerConfig}). */
    public static class Broker {
        /**
         * Broker URL: memory:// (embedded, nothing survives a restart), redis://[user:password@]host:port[/db],
         * rediss:// for TLS, redis+cluster://host:port,host:port, redis+sentinel://host:port,.../masterName. Defaults to
         * memory://, unless redisson-config is set.
         */
        private String url;
        /** Explicit broker provider id (memory, redis); wins over the URL's scheme. */
        private String brokerId;
        /** ACL user (Redis 6+); defaults to the URL's. */
        private String username;
        /** Password; defaults to the URL's. Never printed. */
        private String password;
        /** Logical database; defaults to the URL's /db, else 0. */
        private Integer database;
        /** Time allowed to connect. */
        private Duration connectTimeout = Duration.ofSeconds(5);
        /**
         * Time allowed for one command. A submit blocks at most twice this in all, retries included: once for the read of the partition counts of its queues, only by a process's first submit to a queue (later reads, at most once a second per queue, are made in the background), once for the write (plus the option wait.timeout when wait.replicas is set).
         */
        private Duration commandTimeout = Duration.ofSeconds(5);
        /** Prefix of every key. */
        private String keyPrefix = "binomic";
        /** Largest encoded argument a submit accepts, in bytes. */
        private int maxPayloadBytes = 524_288;
        /** Dead letters kept per queue, approximately. */
        private int deadLetterMaxCount = 100_000;
        /** Dead letters older than this are dropped. */
        private Duration deadLetterMaxAge = Duration.ofDays(14);
        /**
         * Path of a Redisson YAML file (Sentinel, Cluster, TLS settings), which then says where Redis is:
         * the broker option redisson.config. Leave url unset beside it.
         */
        private String redissonConfig;
        /** Provider options, such as wait.replicas, eviction.allowed or priority.fairness (see configuration.md). */
        private Map<String, String> options = new LinkedHashMap<>();

        public String getUrl() {
            return url;
        }

        public void setUrl(String url) {
            this.url = url;
        }

        public String getBrokerId() {
            return brokerId;
        }

        public void setBrokerId(String brokerId) {
            this.brokerId = brokerId;
        }

        public String getUsername() {
            return username;
        }

        public void setUsername(String username) {
            this.username = username;
        }

        public String getPassword() {
            return password;
        }

        public void setPassword(String password) {
            this.password = password;
        }

        public Integer getDatabase() {
            return database;
        }

        public void setDatabase(Integer database) {
            this.database = database;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public int getMaxPayloadBytes() {
            return maxPayloadBytes;
        }

        public void setMaxPayloadBytes(int maxPayloadBytes) {
            this.maxPayloadBytes = maxPayloadBytes;
        }

        public int getDeadLetterMaxCount() {
            return deadLetterMaxCount;
        }

        public void setDeadLetterMaxCount(int deadLetterMaxCount) {
            this.deadLetterMaxCount = deadLetterMaxCount;
        }

        public Duration getDeadLetterMaxAge() {
            return deadLetterMaxAge;
        }

        public void setDeadLetterMaxAge(Duration deadLetterMaxAge) {
            this.deadLetterMaxAge = deadLetterMaxAge;
        }

        public String getRedissonConfig() {
            return redissonConfig;
        }

        public void setRedissonConfig(String redissonConfig) {
            this.redissonConfig = redissonConfig;
        }

        public Map<String, String> getOptions() {
            return options;
        }

        public void setOptions(Map<String, String> options) {
            this.options = options;
        }
    }

    /** The worker this application runs ({@code WorkerConfig}). */
    public static class Worker {
        /**
         * Whether the application runs a worker, started and stopped with the application context. It
         * starts only when there is something to read: a handler bean, or queues set below.
         */
        private boolean enabled = true;
        /** Queues the worker consumes; defaults to every queue of the handler beans' tasks. */
        private List<String> queues = new ArrayList<>();
        /** Tasks running at once, each on a virtual thread; also the most messages fetched at once. */
        private int concurrency = 5;
        /**
         * How long stopping waits for running tasks before interrupting them (put back, attempt unchanged). Capped by
         * spring.lifecycle.timeout-per-shutdown-phase, so the context never gives up on the worker first.
         */
        private Duration shutdownGrace = Duration.ofSeconds(10);
        /** Idle time after which another worker may reclaim a message; running messages are renewed every quarter of it. */
        private Duration leaseTimeout = Duration.ofSeconds(30);
        /** Longest block of one fetch; shorter than the lease timeout. Defaults to 1s, or half the lease timeout when that is shorter. */
        private Duration pollTimeout;
        /** How often the worker looks for stranded messages. Defaults to 10s, or half the lease timeout when that is shorter. */
        private Duration reclaimInterval;
        /** This worker's consumer name in the group; defaults to host-pid-random. */
        private String consumerName;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public List<String> getQueues() {
            return queues;
        }

        public void setQueues(List<String> queues) {
            this.queues = queues;
        }

        public int getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        public Duration getShutdownGrace() {
            return shutdownGrace;
        }

        public void setShutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = shutdownGrace;
        }

        public Duration getLeaseTimeout() {
            return leaseTimeout;
        }

        public void setLeaseTimeout(Duration leaseTimeout) {
            this.leaseTimeout = leaseTimeout;
        }

        public Duration getPollTimeout() {
            return pollTimeout;
        }

        public void setPollTimeout(Duration pollTimeout) {
            this.pollTimeout = pollTimeout;
        }

        public Duration getReclaimInterval() {
            return reclaimInterval;
        }

        public void setReclaimInterval(Duration reclaimInterval) {
            this.reclaimInterval = reclaimInterval;
        }

        public String getConsumerName() {
            return consumerName;
        }

        public void setConsumerName(String consumerName) {
            this.consumerName = consumerName;
        }
    }

    /** Binomic's dashboard and /metrics ({@code Dashboard.Builder}), served by the JDK's HTTP server on a port of their own. */
    public static class Dashboard {
        /** Whether the application serves the dashboard, started with the client and stopped with the context. */
        private boolean enabled;
        /** Address to listen on; any other than loopback needs a token. */
        private String address = "127.0.0.1";
        /** Port to listen on, 0 for any free one. */
        private int port = 9470;
        /** Secret (16 characters or more) every request must show as Authorization: Bearer, or once as ?token= in a browser. */
        private String token;
        /** Whether to refuse every change (replay, purge, cancel, pause, resume). */
        private boolean readOnly;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getAddress() {
            return address;
        }

        public void setAddress(String address) {
            this.address = address;
        }

        public int getPort() {
            return port;
        }

        public void setPort(int port) {
            this.port = port;
        }

        public String getToken() {
            return token;
        }

        public void setToken(String token) {
            this.token = token;
        }

        public boolean isReadOnly() {
            return readOnly;
        }

        public void setReadOnly(boolean readOnly) {
            this.readOnly = readOnly;
        }
    }

    /** Retry policy and timeout of tasks that do not declare their own ({@code TaskDefaults}). */
    public static class TaskDefaults {
        /** Executions allowed per message, the first included. */
        private int maxAttempts = 3;
        /** Longest run of one execution; then it is interrupted and counts as a failed attempt. */
        private Duration taskTimeout = Duration.ofSeconds(600);
        /** A message older than this when picked up is retried instead of run; unset: never. */
        private Duration staleAfter;
        /** Wait between attempts. */
        @NestedConfigurationProperty
        private final Backoff backoff = new Backoff();

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getTaskTimeout() {
            return taskTimeout;
        }

        public void setTaskTimeout(Duration taskTimeout) {
            this.taskTimeout = taskTimeout;
        }

        public Duration getStaleAfter() {
            return staleAfter;
        }

        public void setStaleAfter(Duration staleAfter) {
            this.staleAfter = staleAfter;
        }

        public Backoff getBackoff() {
            return backoff;
        }
    }

    /** Wait between attempts: base times factor to the power of the failed attempt, capped, with jitter ({@code Backoff}). */
    public static class Backoff {
        /** Wait after the first failed attempt. */
        private Duration base = Duration.ofMillis(1500);
        /** Multiplier per further attempt (1 for a fixed wait). */
        private double factor = 2;
        /** Longest wait. */
        private Duration cap = Duration.ofSeconds(30);
        /** Fraction of each wait that may be randomly removed, 0 to 1, so that failed jobs do not retry in step. */
        private double jitter = 0;

        public Duration getBase() {
            return base;
        }

        public void setBase(Duration base) {
            this.base = base;
        }

        public double getFactor() {
            return factor;
        }

        public void setFactor(double factor) {
            this.factor = factor;
        }

        public Duration getCap() {
            return cap;
        }

        public void setCap(Duration cap) {
            this.cap = cap;
        }

        public double getJitter() {
            return jitter;
        }

        public void setJitter(double jitter) {
            this.jitter = jitter;
        }
    }

    /** The transactional outbox of binomic-jdbc, on the application's DataSource. */
    public static class Outbox {
        /**
         * Whether this application runs a relay that moves committed outbox rows into the broker. Turn it off where
         * another process relays the same table.
         */
        private boolean relay = true;

        public boolean isRelay() {
            return relay;
        }

        public void setRelay(boolean relay) {
            this.relay = relay;
        }
    }
}
