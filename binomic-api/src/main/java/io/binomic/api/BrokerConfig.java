package io.binomic.api;

import io.binomic.api.internal.Once;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Where messages live and how to reach them. Built by {@link #builder()}, whose setters say the
 * defaults; immutable, and equal to another broker configuration with the same settings. Its
 * {@link #toString()} shows neither the password, nor the one in the URL, nor an option's value whose
 * name says it is a secret (a {@code password}, {@code secret} or {@code token} in it).
 */
public final class BrokerConfig {

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    private static final Pattern SCHEME = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*)://.*");
    private static final Pattern SECRET_OPTION = Pattern.compile("(?i)password|secret|token");

    private final String url;
    private final Optional<String> brokerId;
    private final Optional<String> username;
    private final Optional<String> password;
    private final int database;
    private final Duration connectTimeout;
    private final Duration commandTimeout;
    private final String keyPrefix;
    private final int maxPayloadBytes;
    private final int deadLetterMaxCount;
    private final Duration deadLetterMaxAge;
    private final Map<String, String> options;

    private BrokerConfig(Builder b) {
        String url = Config.nonNull(b.url.get(), "url must not be null; use memory:// for the embedded broker");
        Config.nonNull(b.options.get(), "options must not be null");
        if (!SCHEME.matcher(url).matches()) {
            throw new IllegalArgumentException("url must start with a scheme such as memory://, redis://host:6379 or rediss://host:6380, was '"
                    + url + "'");
        }
        this.url = url;
        this.database = Config.requireAtLeast("database", 0, b.database.get());
        this.connectTimeout = Config.requirePositive("connectTimeout", b.connectTimeout.get());
        this.commandTimeout = Config.requirePositive("commandTimeout", b.commandTimeout.get());
        this.keyPrefix = b.keyPrefix.get();
        if (keyPrefix == null || !PREFIX.matcher(keyPrefix).matches()) {
            throw new IllegalArgumentException("keyPrefix must be 1-64 of letters, digits, '_', '.', ':', '-', was '" + keyPrefix + "'");
        }
        this.maxPayloadBytes = Config.requireAtLeast("maxPayloadBytes", 1, b.maxPayloadBytes.get());
        this.deadLetterMaxCount = Config.requireAtLeast("deadLetterMaxCount", 1, b.deadLetterMaxCount.get());
        this.deadLetterMaxAge = Config.requirePositive("deadLetterMaxAge", b.deadLetterMaxAge.get());
        this.brokerId = Optional.ofNullable(b.brokerId.get());
        this.username = Optional.ofNullable(b.username.get());
        this.password = Optional.ofNullable(b.password.get());
        this.options = Map.copyOf(b.options.get());
    }

    /** The embedded broker ({@code memory://}) with every other setting at its default. */
    public static BrokerConfig defaults() { return builder().build(); }

    /** Starts a broker configuration; every setting not given keeps its documented default. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding these settings, each of which may be replaced once. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.url.copy(url);
        b.brokerId.copy(brokerId.orElse(null));
        b.username.copy(username.orElse(null));
        b.password.copy(password.orElse(null));
        b.database.copy(database);
        b.connectTimeout.copy(connectTimeout);
        b.commandTimeout.copy(commandTimeout);
        b.keyPrefix.copy(keyPrefix);
        b.maxPayloadBytes.copy(maxPayloadBytes);
        b.deadLetterMaxCount.copy(deadLetterMaxCount);
        b.deadLetterMaxAge.copy(deadLetterMaxAge);
        b.options.copy(options);
        return b;
    }

    /**
     * Broker URL: {@code memory://} (embedded), {@code redis://host:port}, {@code rediss://} (TLS).
     * It may hold a password: log {@link #redactedUrl()} instead.
     */
    public String url() { return url; }

    /** Explicit provider id, overriding the URL scheme's choice. */
    public Optional<String> brokerId() { return brokerId; }

    /** ACL user (Redis 6+), if any. */
    public Optional<String> username() { return username; }

    /** Password, if any; never printed. */
    public Optional<String> password() { return password; }

    /** Logical database number (Redis {@code SELECT}). */
    public int database() { return database; }

    /** Time allowed to connect. */
    public Duration connectTimeout() { return connectTimeout; }

    /** Time allowed for one command. */
    public Duration commandTimeout() { return commandTimeout; }

    /** Prefix of every key the broker writes. */
    public String keyPrefix() { return keyPrefix; }

    /** Largest encoded payload accepted by {@code submit}. */
    public int maxPayloadBytes() { return maxPayloadBytes; }

    /** Dead letters kept per queue; older ones are dropped past it. */
    public int deadLetterMaxCount() { return deadLetterMaxCount; }

    /** Dead letters older than this are dropped. */
    public Duration deadLetterMaxAge() { return deadLetterMaxAge; }

    /**
     * Provider-specific settings (for Redis: {@code redisson.config} = a Redisson YAML file for
     * Sentinel or Cluster; {@code wait.replicas}, {@code wait.timeout} = replicas that must confirm
     * each write, and for how long to wait); unmodifiable.
     */
    public Map<String, String> options() { return options; }

    /** The URL scheme in lower case: {@code memory}, {@code redis}, {@code rediss}. */
    public String scheme() { return url.substring(0, url.indexOf("://")).toLowerCase(Locale.ROOT); }

    /** The URL with any password replaced by {@code ****}, safe to log. */
    public String redactedUrl() { return redact(url); }

    private static String redact(String url) { return url.replaceAll("//([^/@]*):[^/@]*@", "//$1:****@"); }

    /** The options sorted by name, {@code ****} for the value of one whose name says it is a secret. */
    private static String redact(Map<String, String> options) {
        Map<String, String> shown = new TreeMap<>();
        options.forEach((name, value) -> shown.put(name, SECRET_OPTION.matcher(name).find() ? "****" : value));
        return shown.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BrokerConfig other && url.equals(other.url) && brokerId.equals(other.brokerId)
                && username.equals(other.username) && password.equals(other.password) && database == other.database
                && connectTimeout.equals(other.connectTimeout) && commandTimeout.equals(other.commandTimeout)
                && keyPrefix.equals(other.keyPrefix) && maxPayloadBytes == other.maxPayloadBytes
                && deadLetterMaxCount == other.deadLetterMaxCount && deadLetterMaxAge.equals(other.deadLetterMaxAge)
                && options.equals(other.options);
    }

    @Override
    public int hashCode() {
        return Objects.hash(url, brokerId, username, password, database, connectTimeout, commandTimeout, keyPrefix,
                maxPayloadBytes, deadLetterMaxCount, deadLetterMaxAge, options);
    }

    /** The settings, with {@code ****} for the password, the URL's password and secret options: safe to log. */
    @Override
    public String toString() {
        return "BrokerConfig[url=" + redactedUrl() + ", brokerId=" + brokerId + ", username=" + username
                + ", password=" + password.map(p -> "****") + ", database=" + database + ", connectTimeout=" + connectTimeout
                + ", commandTimeout=" + commandTimeout + ", keyPrefix=" + keyPrefix + ", maxPayloadBytes=" + maxPayloadBytes
                + ", deadLetterMaxCount=" + deadLetterMaxCount + ", deadLetterMaxAge=" + deadLetterMaxAge + ", options=" + redact(options) + "]";
    }

    /**
     * Builds {@link BrokerConfig}: each setting once (a second call is an {@link IllegalArgumentException}
     * naming both values, passwords as {@code ****}), checked by {@link #build()}.
     */
    public static final class Builder {
        private final Once<String> url = new Once<>("url", "memory://", BrokerConfig::redact);
        private final Once<String> brokerId = new Once<>("brokerId", null);
        private final Once<String> username = new Once<>("username", null);
        private final Once<String> password = new Once<>("password", null, p -> "****");
        private final Once<Integer> database = new Once<>("database", 0);
        private final Once<Duration> connectTimeout = new Once<>("connectTimeout", Duration.ofSeconds(5));
        private final Once<Duration> commandTimeout = new Once<>("commandTimeout", Duration.ofSeconds(5));
        private final Once<String> keyPrefix = new Once<>("keyPrefix", "binomic");
        private final Once<Integer> maxPayloadBytes = new Once<>("maxPayloadBytes", 512 * 1024);
        private final Once<Integer> deadLetterMaxCount = new Once<>("deadLetterMaxCount", 100_000);
        private final Once<Duration> deadLetterMaxAge = new Once<>("deadLetterMaxAge", Duration.ofDays(14));
        private final Once<Map<String, String>> options = new Once<>("options", Map.of(), BrokerConfig::redact);

        private Builder() { }

        /**
         * Broker URL. Defaults to {@code memory://}, the embedded in-process broker. Credentials
         * may be given in the URL ({@code redis://user:secret@host:6379/0}) or by the setters. With
         * the Redis module, a Redis Cluster is {@code redis+cluster://host:port,host:port} and Sentinel
         * {@code redis+sentinel://host:port,host:port/masterName}.
         */
        public Builder url(String url) { return Once.set(this, this.url, url); }

        /** Explicit provider id ({@code memory}, {@code redis}); wins over the URL scheme. Defaults to none. */
        public Builder brokerId(String brokerId) { return Once.set(this, this.brokerId, brokerId); }

        /** ACL user name. Defaults to none (the URL's, if any). */
        public Builder username(String username) { return Once.set(this, this.username, username); }

        /** Password. Defaults to none (the URL's, if any). */
        public Builder password(String password) { return Once.set(this, this.password, password); }

        /** Logical database; at least 0. Defaults to 0 (or the URL's path, e.g. {@code /2}). */
        public Builder database(int database) { return Once.set(this, this.database, database); }

        /** Connect timeout; positive. Defaults to 5 s. */
        public Builder connectTimeout(Duration connectTimeout) { return Once.set(this, this.connectTimeout, connectTimeout); }

        /**
         * Timeout of one command; positive. Defaults to 5 s. It also bounds a submit (one job:
         * {@code submit}, {@code submitJson}, a DELAY, unique or debounced submit) in all: on Redis
         * a submit blocks at most {@code 2 x commandTimeout} (plus the {@code wait.timeout} option
         * when {@code wait.replicas} is set), retries and reconnection included: one
         * {@code commandTimeout} for the read of the queue's partition count (made at most once a
         * second per queue; a failed one keeps the count last read), one for the write. A write
         * not answered in time throws a {@code BrokerException} saying that Redis did not answer.
         */
        public Builder commandTimeout(Duration commandTimeout) { return Once.set(this, this.commandTimeout, commandTimeout); }

        /** Prefix of every key: 1-64 of letters, digits, '_', '.', ':', '-'. Defaults to {@code binomic}. */
        public Builder keyPrefix(String keyPrefix) { return Once.set(this, this.keyPrefix, keyPrefix); }

        /** Largest encoded payload accepted at submit; at least 1. Defaults to 512 KiB. */
        public Builder maxPayloadBytes(int maxPayloadBytes) { return Once.set(this, this.maxPayloadBytes, maxPayloadBytes); }

        /** Dead letters kept per queue; at least 1. Defaults to 100,000. */
        public Builder deadLetterMaxCount(int deadLetterMaxCount) { return Once.set(this, this.deadLetterMaxCount, deadLetterMaxCount); }

        /** Age past which dead letters are dropped; positive. Defaults to 14 days. */
        public Builder deadLetterMaxAge(Duration deadLetterMaxAge) { return Once.set(this, this.deadLetterMaxAge, deadLetterMaxAge); }

        /** Provider-specific options, all given at once (copied when built). Defaults to none. */
        public Builder options(Map<String, String> options) { return Once.set(this, this.options, options); }

        /** Checks the settings and builds the broker configuration, or throws an {@link IllegalArgumentException} naming a bad one. */
        public BrokerConfig build() { return new BrokerConfig(this); }
    }
}
