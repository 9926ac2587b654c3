package io.binomic.jdbc.internal;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.OutboxMonitor;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client a relay stores its jobs through: the application's, started already, or one of the
 * relay's own on a broker's settings, started on first use. The relay's own connects in the relay's
 * rounds, not at its start, so that a broker that cannot be reached yet holds back the jobs (their
 * rows wait) and not the process that runs the relay; each round tries again until it answers.
 */
public final class RelayClient implements AutoCloseable {
    private final Binomic given;
    private final BrokerConfig broker;
    private final ReentrantLock connecting = new ReentrantLock();
    private volatile Binomic connected;
    /** Built at {@link #open}, so that settings no provider takes fail the relay's start; started by the first round. */
    private Binomic next;
    private OutboxMonitor monitor;
    private volatile boolean closed;

    private RelayClient(Binomic given, BrokerConfig broker) {
        this.given = given;
        this.broker = broker;
        this.connected = given;
    }

    /** The application's client, started already. */
    public static RelayClient of(Binomic started) {
        return new RelayClient(Objects.requireNonNull(started, "binomic must not be null"), null);
    }

    /** A client of the relay's own on {@code broker}, started by {@link #get()} and closed by {@link #close()}. */
    public static RelayClient own(BrokerConfig broker) {
        return new RelayClient(null, Objects.requireNonNull(broker, "broker must not be null"));
    }

    /** The broker settings: the key prefix of the jobs this relay stores. */
    public BrokerConfig broker() {
        return given != null ? given.config().broker() : broker;
    }

    /**
     * Makes ready to relay and shows {@code shown} on the client's {@code /metrics} and dashboard, at once for the
     * application's client, once connected for the relay's own.
     *
     * @throws io.binomic.api.ProviderNotFoundException when no broker provider on the path takes the broker's URL
     */
    public void open(OutboxMonitor shown) {
        connecting.lock();
        try {
            monitor = shown;
            if (given != null) {
                try {
                    given.queues(); // refuses a client that is not started, which would fail every round
                } catch (IllegalStateException e) {
                    throw new IllegalStateException("an outbox relay needs a started Binomic: call binomic.start() before the relay's"
                            + " start() (" + e.getMessage() + ")", e);
                }
                given.addOutboxMonitor(shown);
            } else if (connected == null && next == null) {
                next = build();
            }
        } finally {
            connecting.unlock();
        }
    }

    /** True when the client is started: the application's always, the relay's own once a round reached the broker. */
    public boolean connected() {
        return connected != null;
    }

    /**
     * The started client; the relay's own is started here on first use.
     *
     * @throws io.binomic.api.BrokerException when the broker cannot be reached (the next call tries again)
     * @throws IllegalStateException when the relay is closed
     */
    public Binomic get() {
        Binomic c = connected;
        if (c != null) {
            return c;
        }
        connecting.lock();
        try {
            if (connected == null) {
                if (closed) {
                    throw new IllegalStateException("the outbox relay is closed");
                }
                Binomic starting = next != null ? next : build();
                next = null;
                try {
                    starting.start();
                } catch (RuntimeException e) {
                    // An instance whose start failed half-way may not start again: the next round builds a fresh one.
                    starting.close();
                    throw e;
                }
                if (monitor != null) {
                    starting.addOutboxMonitor(monitor);
                }
                connected = starting;
            }
            return connected;
        } finally {
            connecting.unlock();
        }
    }

    private Binomic build() {
        return Binomic.builder().config(BinomicConfig.builder().broker(broker).build()).build();
    }

    /** Stops showing the relay's table, and closes the relay's own client; a start of it under way is let end first. */
    @Override
    public void close() {
        closed = true;
        connecting.lock();
        try {
            if (given != null) {
                if (monitor != null) {
                    given.removeOutboxMonitor(monitor);
                }
                return;
            }
            if (connected != null) {
                connected.close();
            }
            if (next != null) {
                next.close();
                next = null;
            }
        } finally {
            connecting.unlock();
        }
    }
}
