package io.binomic.it;

import io.binomic.api.BrokerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A real Redis with the ACL users of the documented rule sets ({@value #RULES}, which
 * module-info-docs/redis.md quotes word for word): {@value #WORKER}, {@value #PRODUCER} and
 * {@value #READER}, each with password {@value #PASSWORD}. The default user stays unrestricted:
 * it is the admin connection ({@link RedisServer#call}) that sets up what a suite needs.
 */
final class AclRedis {
    static final String RULES = "redis-acl.txt";
    static final String WORKER = "binomic-worker";
    static final String PRODUCER = "binomic-producer";
    static final String READER = "binomic-reader";
    static final String PASSWORD = "acl-test-secret";
    private static RedisServer shared;

    private AclRedis() { }

    /** One server for the test JVM, its users created from the rule sets. */
    static synchronized RedisServer shared() {
        if (shared == null) {
            shared = RedisServer.startNew();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
            createUsers(shared, rules());
        }
        return shared;
    }

    /** The rule sets, one {@code ACL SETUSER} command a line, as the resource has them. */
    static String rulesText() {
        try (InputStream in = AclRedis.class.getResourceAsStream(RULES)) {
            if (in == null) {
                throw new IllegalStateException(RULES + " is missing from the test resources of io.binomic.it");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> rules() {
        return rulesText().lines().filter(l -> !l.isBlank()).toList();
    }

    /** Runs each rule line as a command on {@code server}, giving its user {@link #PASSWORD}. */
    static void createUsers(RedisServer server, List<String> lines) {
        for (String line : lines) {
            List<String> words = new ArrayList<>(Arrays.asList(line.strip().split("\\s+")));
            words.add(">" + PASSWORD);
            server.call(words.toArray(String[]::new));
        }
    }

    /** The rule line of {@code user}. */
    static String rule(String user) {
        return rules().stream().filter(l -> l.startsWith("ACL SETUSER " + user + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no rule set of user " + user + " in " + RULES));
    }

    /** BrokerConfig settings that connect as {@code user}. */
    static UnaryOperator<BrokerConfig.Builder> as(String user) {
        return b -> b.username(user).password(PASSWORD);
    }

    /** {@code redis://user:password@host:port} of {@code server}. */
    static String url(RedisServer server, String user) {
        return "redis://" + user + ":" + PASSWORD + "@" + server.host() + ":" + server.port();
    }
}
