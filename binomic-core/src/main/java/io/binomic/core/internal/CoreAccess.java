package io.binomic.core.internal;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.Binomic;
import io.binomic.core.OutboxMonitor;
import java.util.List;

/**
 * What the implementation packages may read of a {@link Binomic} beyond its public API (its stats
 * recorder, its workers, its queues), without making that API public: {@code Binomic} installs the
 * bridge when its class initialises, as the JDK's {@code SharedSecrets} do.
 */
public final class CoreAccess {

    /** The package-private view of a client. */
    public interface Bridge {
        StatsRecorder stats(Binomic binomic);

        /** Every queue the client knows: its tasks' and its worker configuration's. */
        List<String> queues(Binomic binomic);

        Broker broker(Binomic binomic);

        Scheduler scheduler(Binomic binomic);

        /** The outboxes whose state the client's /metrics and dashboard show. */
        List<OutboxMonitor> outboxes(Binomic binomic);

        /**
         * Pauses or resumes {@code task} of {@code queue} as {@code Queues.pauseTask} and {@code resumeTask} do, without their
         * warning of a likely typo: for the CLI's {@code --any-task}, which says the name is meant as typed.
         */
        void setTaskPausedAsTyped(Binomic binomic, String queue, String task, boolean paused);
    }

    private static volatile Bridge bridge;

    private CoreAccess() { }

    /** Called once, by {@code Binomic}'s static initialiser. */
    public static void install(Bridge b) { bridge = b; }

    /** The bridge; any holder of a {@code Binomic} has initialised its class, so it is set. */
    public static Bridge get() {
        Bridge b = bridge;
        if (b == null) {
            throw new IllegalStateException("Binomic is not initialised");
        }
        return b;
    }
}
