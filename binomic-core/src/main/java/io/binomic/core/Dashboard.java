package io.binomic.core;

import io.binomic.core.internal.web.BinomicMetrics;
import io.binomic.core.internal.web.DashboardPages;
import io.binomic.core.internal.web.DashboardServer;
import io.binomic.core.internal.web.MetricsSource;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

/**
 * The operators' view of a {@link Binomic} client, served over HTTP by this JVM: {@code /metrics}
 * in the Prometheus text format, and the dashboard pages (overview, workers, jobs, dead letters,
 * schedules, queues, batches and workflows by id) where an operator replays or purges dead letters,
 * cancels jobs, batches and workflows and pauses queues, each change a POST with a CSRF token and a confirmation. Started with
 * {@code binomic.dashboard().start()}; {@link #close()} stops it (closing the client does not).
 * JDK only ({@code jdk.httpserver}).
 *
 * {@snippet class=io.binomic.core.JavadocSnippetsTest region=dashboard}
 */
public final class Dashboard implements AutoCloseable {
    /** The port a dashboard listens on unless told otherwise. */
    public static final int DEFAULT_PORT = 9470;

    private final DashboardServer server;

    private Dashboard(DashboardServer server) { this.server = server; }

    /** The address it listens on, with the actual port when port 0 was asked. */
    public InetSocketAddress address() { return server.address(); }

    /** Its base address, such as {@code http://127.0.0.1:9470/}. */
    public URI uri() { return server.uri(); }

    /** Whether it refuses every change. */
    public boolean isReadOnly() { return server.settings().readOnly(); }

    /** Stops serving. */
    @Override
    public void close() { server.close(); }

    /** Builds and starts a {@link Dashboard}; obtained from {@link Binomic#dashboard()}. */
    public static final class Builder {
        private final Binomic binomic;
        private String bindAddress = "127.0.0.1";
        private int port = DEFAULT_PORT;
        private String token;
        private boolean readOnly;
        private final Set<String> given = new HashSet<>();

        Builder(Binomic binomic) { this.binomic = Objects.requireNonNull(binomic, "binomic"); }

        /**
         * The address to listen on: an IP address or host name. Defaults to {@code 127.0.0.1}, so
         * only this host sees it; any other address needs a {@link #token}.
         */
        public Builder bindAddress(String address) {
            return set("bindAddress", () -> this.bindAddress = Objects.requireNonNull(address, "bindAddress must not be null"));
        }

        /** The port, 0 for any free one. Defaults to {@value #DEFAULT_PORT}. */
        public Builder port(int port) { return set("port", () -> this.port = port); }

        /**
         * The secret (at least 16 characters) every request must show, as
         * {@code Authorization: Bearer <token>} (Prometheus' {@code authorization} setting) or once
         * in a browser as {@code ?token=<token>}, kept then as an HttpOnly cookie. Required for an
         * address other than loopback. Defaults to none.
         */
        public Builder token(String token) {
            return set("token", () -> this.token = Objects.requireNonNull(token, "token must not be null; leave it out for none"));
        }

        /** Whether to refuse every change (replay, purge, cancel, pause, resume). Defaults to false. */
        public Builder readOnly(boolean readOnly) { return set("readOnly", () -> this.readOnly = readOnly); }

        /** A setting given twice is a mistake (which one was meant?): refused, naming it. */
        private Builder set(String setting, Runnable assignment) {
            if (!given.add(setting)) {
                throw new IllegalArgumentException("dashboard " + setting + " is set twice; set it once");
            }
            assignment.run();
            return this;
        }

        /**
         * Starts listening.
         *
         * @throws IllegalArgumentException for a bad port or token, or a non-loopback address without a token
         * @throws UncheckedIOException when the port cannot be bound
         */
        public Dashboard start() {
            InetAddress bind;
            try {
                bind = InetAddress.getByName(bindAddress);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("dashboard bind address '" + bindAddress + "' is not an address of this host: "
                        + e.getMessage() + "; give an IP address such as 127.0.0.1", e);
            }
            DashboardServer.Settings settings = new DashboardServer.Settings(bind, port, token, readOnly);
            BinomicMetrics metrics = new BinomicMetrics(binomic);
            return new Dashboard(DashboardServer.start(settings, () -> MetricsSource.render(metrics, null),
                    new DashboardPages(binomic, null, null, readOnly)));
        }
    }
}
