package io.binomic.api;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where messages live and how to reach them.
 *
 * @param url broker URL: {@code memory://} (embedded), {@code redis://host:port}, {@code rediss://} (TLS)
 * @param brokerId explicit provider id, overriding the URL scheme's choice
 * @param username ACL user (Redis 6+), if any
 * @param password password, if any; never printed
 * @param database logical database number (Redis {@code SELECT})
 * @param connectTimeout time allowed to connect
 * @param commandTimeout time allowed for one command
 * @param keyPrefix prefix of every key the broker writes
 * @param maxPayloadBytes largest encoded payload accepted by {@code submit}
 * @param deadLetterMaxCount dead letters kept per queue; older ones are dropped past it
 * @param deadLetterMaxAge dead letters older than this are dropped
 * @param options provider-specific settings (for Redis: {@code redisson.config} = a Redisson YAML file for Sentinel or Cluster;
 *        {@code wait.replicas}, {@code wait.timeout} = replicas that must confirm each write, and for how long to wait)
 */
public record BrokerConfig(String url, Optional<String> brokerId, Optional<String> username, Optional<String> password,
                           int database, Duration connectTimeout, Duration commandTimeout, String keyPrefix,
                           int maxPayloadBytes, int deadLetterMaxCount, Duration deadLetterMaxAge,
                           Map<String, String> options) {

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    private static final Pattern SCHEME = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*)://.*");

    public BrokerConfig {
        if (url == null || !SCHEME.matcher(url).matches()) {
            throw new IllegalArgumentException("url must start with a scheme such as memory://, redis://host:6379 or rediss://host:6380, was '"
                    + url + "'");
        }
        Config.requireAtLeast("database", 0, database);
        Config.requirePositive("connectTimeout", connectTimeout);
        Config.requirePositive("commandTimeout", commandTimeout);
        if (keyPrefix == null || !PREFIX.matcher(keyPrefix).matches()) {
            throw new IllegalArgumentException("keyPrefix must be 1-64 of letters, digits, '_', '.', ':', '-', was '" + keyPrefix + "'");
        }
        Config.requireAtLeast("maxPayloadBytes", 1, maxPayloadBytes);
        Config.requireAtLeast("deadLetterMaxCount", 1, deadLetterMaxCount);
        Config.requirePositive("deadLetterMaxAge", deadLetterMaxAge);
        options = Map.copyOf(options);
    }

    /** The URL scheme in lower case: {@code memory}, {@code redis}, {@code rediss}. */
    public String scheme() {
        return url.substring(0, url.indexOf("://")).toLowerCase(java.util.Locale.ROOT);
    }

    /** The URL with any password replaced by {@code ****}, safe to log. */
    public String redactedUrl() {
        return url.replaceAll("//([^/@]*):[^/@]*@", "//$1:****@");
    }

    public static BrokerConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String toString() {
        return "BrokerConfig[url=" + redactedUrl() + ", brokerId=" + brokerId + ", username=" + username
                + ", password=" + password.map(p -> "****") + ", database=" + database + ", connectTimeout=" + connectTimeout
                + ", commandTimeout=" + commandTimeout + ", keyPrefix=" + keyPrefix + ", maxPayloadBytes=" + maxPayloadBytes
                + ", deadLetterMaxCount=" + deadLetterMaxCount + ", deadLetterMaxAge=" + deadLetterMaxAge + ", options=" + options + "]";
    }

    /** Builds {@link BrokerConfig}; values are checked in {@link #build()}. */
    public static final class Builder {
        private String url = "memory://";
        private String brokerId;
        private String username;
        private String password;
        private int database;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration commandTimeout = Duration.ofSeconds(5);
        private String keyPrefix = "binomic";
        private int maxPayloadBytes = 512 * 1024;
        private int deadLetterMaxCount = 100_000;
        private Duration deadLetterMaxAge = Duration.ofDays(14);
        private Map<String, String> options = Map.of();

        private Builder() { }

        /**
         * Broker URL. Defaults to {@code memory://}, the embedded in-process broker. Credentials
         * may be given in the URL ({@code redis://user:secret@host:6379/0}) or by the setters.
         */
        public Builder url(String url) {
            this.url = url;
            return this;
        }

        /** Explicit provider id ({@code memory}, {@code redis}); wins over the URL scheme. Defaults to none. */
        public Builder brokerId(String brokerId) {
            this.brokerId = brokerId;
            return this;
        }

        /** ACL user name. Defaults to none (the URL's, if any). */
        public Builder username(String username) {
            this.username = username;
            return this;
        }

        /** Password. Defaults to none (the URL's, if any). */
        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /** Logical database. Defaults to 0 (or the URL's path, e.g. {@code /2}). */
        public Builder database(int database) {
            this.database = database;
            return this;
        }

        /** Connect timeout. Defaults to 5 s. */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        /** Timeout of one command. Defaults to 5 s. */
        public Builder commandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
            return this;
        }

        /** Prefix of every key. Defaults to {@code binomic}. */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
            return this;
        }

        /** Largest encoded payload accepted at submit. Defaults to 512 KiB. */
        public Builder maxPayloadBytes(int maxPayloadBytes) {
            this.maxPayloadBytes = maxPayloadBytes;
            return this;
        }

        /** Dead letters kept per queue. Defaults to 100,000. */
        public Builder deadLetterMaxCount(int deadLetterMaxCount) {
            this.deadLetterMaxCount = deadLetterMaxCount;
            return this;
        }

        /** Age past which dead letters are dropped. Defaults to 14 days. */
        public Builder deadLetterMaxAge(Duration deadLetterMaxAge) {
            this.deadLetterMaxAge = deadLetterMaxAge;
            return this;
        }

        /** Provider-specific options. Defaults to none. */
        public Builder options(Map<String, String> options) {
            this.options = options;
            return this;
        }

        public BrokerConfig build() {
            if (url == null) {
                throw new IllegalArgumentException("url must not be null; use memory:// for the embedded broker");
            }
            if (options == null) {
                throw new IllegalArgumentException("options must not be null");
            }
            return new BrokerConfig(url, Optional.ofNullable(brokerId), Optional.ofNullable(username), Optional.ofNullable(password),
                    database, connectTimeout, commandTimeout, keyPrefix, maxPayloadBytes, deadLetterMaxCount, deadLetterMaxAge, options);
        }
    }
}
