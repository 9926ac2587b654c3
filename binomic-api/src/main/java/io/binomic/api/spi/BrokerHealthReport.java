package io.binomic.api.spi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A broker capability: the settings of its servers that decide whether the broker can keep its
 * guarantees, as it last read them. The broker reads them itself (at start and periodically), so
 * {@link #serverSettings()} costs no round trip; the core shows them on the dashboard and in
 * {@code /metrics}. A broker without such settings (the embedded one) does not implement it.
 */
public interface BrokerHealthReport {

    /**
     * Every checked setting of every server (one per primary on a cluster), as last read; empty
     * before the broker has started.
     */
    List<ServerSetting> serverSettings();

    /**
     * One setting of one server.
     *
     * @param name the setting (Redis: {@code maxmemory-policy})
     * @param server where it was read ({@code host:port})
     * @param value its value; empty when the server would not tell (Redis: {@code CONFIG} disabled)
     * @param warning what the value puts at risk and how to fix it; empty when the value is safe or unknown
     */
    record ServerSetting(String name, String server, Optional<String> value, Optional<String> warning) {
        public ServerSetting {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(server, "server");
            Objects.requireNonNull(value, "value");
            Objects.requireNonNull(warning, "warning");
        }

        /** True when the value was read and puts nothing at risk. */
        public boolean safe() { return value.isPresent() && warning.isEmpty(); }
    }
}
