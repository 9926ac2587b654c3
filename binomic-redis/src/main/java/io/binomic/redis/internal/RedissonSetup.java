package io.binomic.redis.internal;

import io.binomic.api.BrokerAccessRefusedException;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import java.io.File;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import org.redisson.config.EqualJitterDelay;
import org.redisson.config.BaseConfig;
import org.redisson.config.SslVerificationMode;

/**
 * Turns a {@link BrokerConfig} into a Redisson {@link Config}, and Redisson's connection
 * failures into errors that name the server and the fix.
 *
 * @param redisson the Redisson configuration
 * @param target where we connect, for messages ({@code host:port}, or the YAML file)
 * @param preflight a quick connection check before Redisson starts
 * @param replicaWait how many replicas must confirm each write ({@link ReplicaWait#OFF}: none)
 */
record RedissonSetup(Config redisson, String target, Runnable preflight, ReplicaWait replicaWait) {

    /** Option key: path of a Redisson YAML file (Sentinel, Cluster, anything else Redisson can do). */
    static final String REDISSON_CONFIG_OPTION = "redisson.config";

    /** Option key: a trust store file (PKCS12 or JKS) for {@code rediss://}, instead of the JDK's default trust. */
    static final String TRUSTSTORE_OPTION = "tls.truststore";

    /** Option key: the password of the {@value #TRUSTSTORE_OPTION} file, if it has one. */
    static final String TRUSTSTORE_PASSWORD_OPTION = "tls.truststore.password";

    /** Option key: how many replicas must confirm every enqueue and settlement (Redis {@code WAIT}); 0, the default, waits for none. */
    static final String WAIT_REPLICAS_OPTION = "wait.replicas";

    /** Option key: how long a write waits for the {@value #WAIT_REPLICAS_OPTION} confirmations. */
    static final String WAIT_TIMEOUT_OPTION = "wait.timeout";

    /** Default of {@value #WAIT_TIMEOUT_OPTION}. */
    static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofSeconds(1);

    /**
     * Opt-in durability: every write that enqueues or settles a message is followed, in the same
     * pipeline, by {@code WAIT replicas timeout}; fewer confirmations than {@code replicas} fail the
     * call (the write itself is on the primary).
     *
     * @param replicas confirmations required, 0 for none
     * @param timeout how long Redis waits for them
     */
    record ReplicaWait(int replicas, Duration timeout) {
        static final ReplicaWait OFF = new ReplicaWait(0, DEFAULT_WAIT_TIMEOUT);

        boolean on() { return replicas > 0; }
    }

    /** Command retries: with the retry delay of {@link #timeouts} they ride out a Redis restart of ~10 s. */
    private static final int RETRY_ATTEMPTS = 20;

    /** A Redisson configuration with what every URL form shares: string codec, EVALSHA, TCP keep-alive. */
    static Config newConfig() {
        Config redisson = new Config();
        redisson.setCodec(StringCodec.INSTANCE);
        redisson.setUseScriptCache(true); // EVALSHA instead of sending each script's text every time
        redisson.setTcpKeepAlive(true);
        return redisson;
    }

    /**
     * The timeouts and retries of every URL form. Each connection is sent a PING every command
     * timeout, and replaced when it does not answer within it: a connection whose packets vanish
     * while both ends stay open (a firewall or NAT that dropped the flow, a stalled proxy) gets no
     * reset; without this, the commands sent on it time out and are retried on it again, and
     * Redisson's 30 s default let a worker wait more than a minute before a new connection.
     */
    static void timeouts(BaseConfig<?> servers, BrokerConfig config) {
        int commandMillis = Math.toIntExact(config.commandTimeout().toMillis());
        servers.setConnectTimeout(Math.toIntExact(config.connectTimeout().toMillis()))
                .setTimeout(commandMillis)
                .setPingConnectionInterval(commandMillis)
                .setRetryAttempts(RETRY_ATTEMPTS)
                .setRetryDelay(new EqualJitterDelay(Duration.ofMillis(250), Duration.ofMillis(500)))
                .setReconnectionDelay(new EqualJitterDelay(Duration.ofMillis(100), Duration.ofSeconds(2)))
                .setClientName("binomic");
    }

    /** TLS for every URL form: Redisson checks the certificate and the host name (STRICT); returns the trust, null for the JDK's. */
    static TrustManagerFactory tls(Config redisson, BrokerConfig config) {
        TrustManagerFactory trust = trustManagers(config);
        redisson.setSslVerificationMode(SslVerificationMode.STRICT);
        if (trust != null) {
            redisson.setSslTrustManagerFactory(trust);
        }
        return trust;
    }

    static RedissonSetup of(BrokerConfig config) {
        ReplicaWait replicaWait = replicaWait(config);
        String yaml = config.options().get(REDISSON_CONFIG_OPTION);
        if (yaml != null) {
            try {
                Config redisson = Config.fromYAML(new File(yaml));
                redisson.setCodec(StringCodec.INSTANCE);
                TopologyUrls.warnIfReadsFromReplicas(redisson, yaml);
                return new RedissonSetup(redisson, "the servers of " + yaml, () -> { }, replicaWait);
            } catch (IOException | RuntimeException e) {
                throw new BrokerException("cannot read the Redisson configuration '" + yaml + "' (BrokerConfig option "
                        + REDISSON_CONFIG_OPTION + "): " + e.getMessage(), e);
            }
        }
        String scheme = config.scheme();
        if (scheme.equals("redis") || scheme.equals("redis+cluster") || scheme.equals("redis+sentinel")) {
            refuseTlsOptionsWithoutTls(config);
        }
        if (TopologyUrls.SCHEMES.contains(scheme)) {
            return TopologyUrls.setup(config, replicaWait);
        }
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new IllegalArgumentException("the Redis broker serves redis:// and rediss:// URLs, not '" + config.redactedUrl() + "'");
        }
        URI url;
        try {
            url = new URI(config.url());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl() + "' is not a valid URL: " + e.getReason()
                    + "; expected redis://[user:password@]host[:port][/database]", e);
        }
        if (url.getHost() == null) {
            // java.net.URI leaves the host out as well when the port is not a number: say which it is
            String authority = url.getRawAuthority() == null ? "" : url.getRawAuthority().substring(url.getRawAuthority().lastIndexOf('@') + 1);
            int colon = authority.lastIndexOf(':');
            String port = colon < 0 ? "" : authority.substring(colon + 1);
            String problem = colon > 0 && !port.isEmpty() && !port.chars().allMatch(Character::isDigit)
                    ? "has a port that is not a number ('" + port + "')" : "has no host";
            throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl()
                    + "' " + problem + "; expected redis://[user:password@]host[:port][/database], e.g. redis://127.0.0.1:6379");
        }
        if (url.getPort() > 65535) {
            // Else the socket's "port out of range" would read as a connection failure, not the URL's mistake.
            throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl() + "' has port " + url.getPort()
                    + ", which is not a port (1-65535); expected redis://[user:password@]host[:port][/database], e.g. redis://127.0.0.1:6379");
        }
        int port = url.getPort() == -1 ? 6379 : url.getPort();
        String target = url.getHost() + ":" + port;

        Config redisson = newConfig();
        int database = database(config, url);
        timeouts(redisson.useSingleServer().setAddress(scheme + "://" + target).setDatabase(database)
                .setConnectionMinimumIdleSize(2).setConnectionPoolSize(32), config);
        credentials(config, url.getRawUserInfo(), redisson);
        String username = redisson.getUsername();
        String password = redisson.getPassword();
        // the preflight checks with the same trust as Redisson
        SSLContext preflightTls = scheme.equals("rediss") ? sslContext(tls(redisson, config)) : null;
        Runnable preflight = () -> Preflight.check(url.getHost(), port, preflightTls, username, password,
                database, config.connectTimeout());
        return new RedissonSetup(redisson, target, preflight, replicaWait);
    }

    private static final Pattern SHORT_DURATION = Pattern.compile("(\\d{1,9})(ms|s|m)");

    /**
     * The {@value #WAIT_REPLICAS_OPTION} and {@value #WAIT_TIMEOUT_OPTION} options. A bad value is the
     * caller's mistake, refused before anything connects, with the key and an example of a good one.
     */
    static ReplicaWait replicaWait(BrokerConfig config) {
        String replicasText = config.options().get(WAIT_REPLICAS_OPTION);
        String timeoutText = config.options().get(WAIT_TIMEOUT_OPTION);
        int replicas = 0;
        if (replicasText != null) {
            try {
                replicas = Integer.parseInt(replicasText.strip());
            } catch (NumberFormatException e) {
                replicas = -1;
            }
            if (replicas < 0) {
                throw new IllegalArgumentException("BrokerConfig option " + WAIT_REPLICAS_OPTION + " must be a whole number >= 0"
                        + " (the replicas that must confirm each write; 0 = do not wait), was '" + replicasText
                        + "'; e.g. broker.option." + WAIT_REPLICAS_OPTION + " = 1");
            }
        }
        Duration timeout = DEFAULT_WAIT_TIMEOUT;
        if (timeoutText != null) {
            timeout = positiveDuration(WAIT_TIMEOUT_OPTION, timeoutText.strip(), "1s");
            if (replicasText == null) {
                // Most likely a misspelt or forgotten replicas key: a timeout alone would silently change nothing.
                throw new IllegalArgumentException("BrokerConfig option " + WAIT_TIMEOUT_OPTION + " is set but "
                        + WAIT_REPLICAS_OPTION + " is not, so nothing waits: set broker.option." + WAIT_REPLICAS_OPTION
                        + " = 1 (or more; 0 turns waiting off), or remove " + WAIT_TIMEOUT_OPTION);
            }
        }
        return replicas == 0 ? ReplicaWait.OFF : new ReplicaWait(replicas, timeout);
    }

    /**
     * A broker option's duration: {@code 500ms}, {@code 2s}, {@code 5m} or ISO-8601 ({@code PT2S}),
     * at least a millisecond (Redis' {@code WAIT} counts whole milliseconds, and 0 would mean forever).
     */
    static Duration positiveDuration(String option, String text, String example) {
        Duration d = null;
        Matcher m = SHORT_DURATION.matcher(text.strip());
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                default -> Duration.ofMinutes(n);
            };
        } else {
            try {
                d = Duration.parse(text.strip());
            } catch (DateTimeParseException e) {
                d = null;
            }
        }
        if (d == null || d.toMillis() < 1) {
            throw new IllegalArgumentException("BrokerConfig option " + option + " must be a positive duration such as"
                    + " 500ms, 2s or PT2S, was '" + text + "'; e.g. broker.option." + option + " = " + example);
        }
        return d;
    }

    /**
     * A trust store given with a URL that connects without TLS would be ignored, and whoever set it up would believe the
     * connection encrypted: most likely the URL's scheme lost its {@code s}.
     */
    private static void refuseTlsOptionsWithoutTls(BrokerConfig config) {
        for (String option : List.of(TRUSTSTORE_OPTION, TRUSTSTORE_PASSWORD_OPTION)) {
            if (config.options().containsKey(option)) {
                throw new IllegalArgumentException("BrokerConfig option " + option + " is set, but BrokerConfig.url '"
                        + config.redactedUrl() + "' connects without TLS: use rediss:// (rediss+cluster://, rediss+sentinel://)"
                        + " for TLS, or remove the option");
            }
        }
    }

    /** The trust store of the {@value #TRUSTSTORE_OPTION} option, or null for the JDK's default trust. */
    static TrustManagerFactory trustManagers(BrokerConfig config) {
        String path = config.options().get(TRUSTSTORE_OPTION);
        if (path == null) {
            return null;
        }
        String password = config.options().get(TRUSTSTORE_PASSWORD_OPTION);
        try {
            KeyStore store = KeyStore.getInstance(new File(path), password == null ? null : password.toCharArray());
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            return factory;
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            throw new BrokerException("cannot read the TLS trust store '" + path + "' (BrokerConfig option " + TRUSTSTORE_OPTION
                    + ", a PKCS12 or JKS file; its password in BrokerConfig option " + TRUSTSTORE_PASSWORD_OPTION + "): "
                    + e.getMessage(), e);
        }
    }

    private static SSLContext sslContext(TrustManagerFactory trust) {
        try {
            if (trust == null) {
                return SSLContext.getDefault();
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new BrokerException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    private static int database(BrokerConfig config, URI url) {
        if (config.database() != 0) {
            return config.database();
        }
        String path = url.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            return 0;
        }
        try {
            return Integer.parseInt(path.substring(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("BrokerConfig.url '" + config.redactedUrl() + "' has path '" + path
                    + "'; the path of a Redis URL is the database number, e.g. redis://host:6379/2", e);
        }
    }

    /**
     * The credentials of a URL's raw user info ({@code user:password}, {@code :password} or
     * {@code user}, percent-encoded), for every URL form; explicit config values win.
     */
    static void credentials(BrokerConfig config, String info, Config redisson) {
        String username = null;
        String password = null;
        if (info != null && !info.isEmpty()) {
            int colon = info.indexOf(':');
            if (colon < 0) {
                username = decode(info);
            } else {
                username = colon == 0 ? null : decode(info.substring(0, colon));
                password = decode(info.substring(colon + 1));
            }
        }
        username = config.username().orElse(username);
        password = config.password().orElse(password);
        if (username != null) {
            redisson.setUsername(username);
        }
        if (password != null) {
            redisson.setPassword(password);
        }
    }

    private static String decode(String s) { return URLDecoder.decode(s, StandardCharsets.UTF_8); }

    /** Translates a failure at start into a message that says where, why and what to check. */
    BrokerException startFailure(Throwable failure) {
        String cause = rootMessage(failure);
        String upper = cause.toUpperCase(Locale.ROOT);
        String hint;
        if (upper.contains("WRONGPASS") || upper.contains("NOAUTH") || upper.contains("NOPERM")
                || upper.contains("AUTH") && upper.contains("PASSWORD")) {
            // Redis answered, so it runs: the credentials are what to change.
            String user = redisson.getUsername() == null ? "default" : redisson.getUsername();
            String refused = upper.contains("NOAUTH") ? " needs a password, and none is set (user " + user + ")"
                    : upper.contains("WITHOUT ANY PASSWORD CONFIGURED") ? " has no password, but one is set (user " + user + ")"
                    : " refused the password for user " + user;
            return new BrokerAccessRefusedException("Redis at " + target + refused + ": " + cause
                    + "; check BrokerConfig.password and BrokerConfig.username (or user:password@ in BrokerConfig.url)", failure);
        } else if (String.valueOf(failure.getMessage()).startsWith(Preflight.NO_TLS_ANSWER)) {
            // Not "frozen": the likely cause is a rediss:// URL at a port that speaks no TLS, which a longer timeout would not fix.
            String message = failure.getMessage();
            boolean plain = message.endsWith(Preflight.PLAIN_REDIS);
            String said = "Redis at " + target + " did not answer the TLS handshake "
                    + message.substring(Preflight.NO_TLS_ANSWER.length() - "within ".length())
                    + "; the server may not speak TLS on this port: use redis:// or the server's TLS port in BrokerConfig.url";
            // A port that answers plain Redis refuses TLS for good, as an untrusted certificate does; silence may be an outage.
            return plain ? new BrokerAccessRefusedException(said, failure) : new BrokerException(said
                    + " (if it is a TLS port of a frozen or overloaded server, raise BrokerConfig.connectTimeout)", failure);
        } else if (String.valueOf(failure.getMessage()).startsWith(Preflight.NO_ANSWER)) {
            // Connected, so something listens: a frozen (SIGSTOPped, swapping, overloaded) server, not a stopped one.
            return new BrokerException("Redis at " + target + " accepted the connection but did not answer: " + failure.getMessage()
                    + "; is it frozen or overloaded? check BrokerConfig.url, or raise BrokerConfig.connectTimeout", failure);
        } else if (cause.startsWith(Preflight.NO_DATABASE) || upper.contains("DB INDEX IS OUT OF RANGE")) {
            // Redis answered, so it runs: the database number (the URL's path) is what to change.
            return new BrokerException("Redis at " + target + " " + (cause.startsWith(Preflight.NO_DATABASE)
                    ? cause.substring("Redis ".length()) : "refused the database: " + cause)
                    + "; check the /database of BrokerConfig.url (or BrokerConfig.database)", failure);
        } else if (cause.startsWith(Preflight.NOT_REDIS)) {
            hint = "another service listens there: check the port in BrokerConfig.url";
        } else if (cause.startsWith(Preflight.NODE_OF_A_CLUSTER)) {
            hint = "see module-info-docs/redis.md, Scaling out";
        } else if (upper.contains("TLS HOSTNAME VERIFICATION FAILED")) {
            return new BrokerAccessRefusedException("cannot connect to Redis at " + target + ": " + cause + "; connect with a name the"
                    + " certificate is issued for (BrokerConfig.url), or give the server a certificate for this name", failure);
        } else if (upper.contains("TLS CERTIFICATE NOT TRUSTED")) {
            return new BrokerAccessRefusedException("cannot connect to Redis at " + target + ": " + cause + "; add the server's CA to"
                    + " the trust store (BrokerConfig option " + TRUSTSTORE_OPTION + ", or the JDK's)", failure);
        } else if (RedisContext.causedBy(failure, SSLException.class)) {
            hint = "is the server's TLS port in BrokerConfig.url, and does it speak TLS (rediss://) at all?";
        } else if (RedisContext.causedBy(failure, UnknownHostException.class)) {
            hint = "check the host name in BrokerConfig.url";
        } else if (upper.contains("WRONGTYPE")) {
            // Redis answered: a queue's key holds something Binomic did not write there
            return new BrokerException("Redis at " + target + " refused to set up a queue: " + cause
                    + "; a key of the queue (binomic:{queue}:stream or its :stream:levels or :stream:p<N>) holds another type:"
                    + " check it with TYPE, then delete or rename it", failure);
        } else if (upper.contains("CONNECTION RESET")) {
            // A TLS port resets a connection that speaks plain Redis to it.
            hint = "is redis-server running, and is the port a TLS one (then rediss://)? check BrokerConfig.url";
        } else {
            hint = "is redis-server running? check BrokerConfig.url";
        }
        return new BrokerException("cannot connect to Redis at " + target + ": " + cause + "; " + hint, failure);
    }

    /** The most telling message in the chain: a socket error or Redis' own error reply. */
    static String rootMessage(Throwable failure) {
        Throwable deepest = failure;
        for (Throwable c = failure; c != null; c = c.getCause()) {
            if (c instanceof CertificateException && isHostnameMismatch(c.getMessage())) {
                return "TLS hostname verification failed: the server's certificate is not issued for this host ("
                        + c.getMessage() + ")";
            }
            if (c instanceof CertPathBuilderException || c instanceof CertPathValidatorException) {
                return "TLS certificate not trusted: " + c.getMessage();
            }
            if (c instanceof ConnectException) {
                String m = c.getMessage() == null ? "connection refused" : c.getMessage();
                // netty's message is "Connection refused: /127.0.0.1:6390"; the target is printed already.
                int colon = m.indexOf(": ");
                return colon > 0 ? m.substring(0, colon) : m;
            }
            if (c instanceof UnknownHostException) {
                return "unknown host '" + c.getMessage() + "'";
            }
            String m = c.getMessage();
            if (m != null && (m.contains("WRONGPASS") || m.contains("NOAUTH") || m.contains("NOPERM"))) {
                return m.substring(Math.max(0, firstOf(m, "WRONGPASS", "NOAUTH", "NOPERM")));
            }
            deepest = c;
        }
        if (deepest.getMessage() == null) {
            return deepest.getClass().getSimpleName();
        }
        // Redisson appends its channel, command and promise to Redis' reply: internals, not the reason.
        String m = deepest.getMessage();
        int internals = m.indexOf(". channel: [");
        return internals > 0 ? m.substring(0, internals) : m;
    }

    /** The JDK's HostnameChecker says "No name matching x found" or "No subject alternative names ... found". */
    private static boolean isHostnameMismatch(String message) {
        return message != null && (message.startsWith("No name matching") || message.startsWith("No subject alternative"));
    }

    private static int firstOf(String m, String... words) {
        return Arrays.stream(words).mapToInt(m::indexOf).filter(i -> i >= 0).min().orElse(-1);
    }
}
