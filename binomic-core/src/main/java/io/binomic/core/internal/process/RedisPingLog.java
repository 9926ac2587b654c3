package io.binomic.core.internal.process;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Keeps Redisson's ping failures out of the logs of the processes Binomic configures (the CLI, a master
 * and its workers): while Redis is frozen or unreachable, Redisson logs each failed connection ping as
 * an error with a whole {@code RedisTimeoutException (PING)} stack trace, 5 to 15 of them per process in
 * a 30 s outage, which only repeat what Binomic's own warnings say once, with what happens next
 * (a worker's lease renewal or fetch that got no answer, its health {@code BROKER UNREACHABLE}).
 * A {@code java.util.logging} configuration of the user's own, or {@code --verbose}, keeps them.
 */
public final class RedisPingLog {
    /** The logger of Redisson's connection pings: it logs nothing else above DEBUG. */
    public static final String LOGGER = "org.redisson.client.handler.PingConnectionHandler";
    /** Held so that its level stays set: java.util.logging keeps its loggers only weakly. */
    private static final Logger PINGS = Logger.getLogger(LOGGER);

    private RedisPingLog() { }

    /** Turns the ping failures off, unless a {@code java.util.logging} configuration file or class is given. */
    public static void quietUnlessConfigured() {
        if (System.getProperty("java.util.logging.config.file") == null && System.getProperty("java.util.logging.config.class") == null) {
            PINGS.setLevel(Level.OFF);
        }
    }
}
