package io.binomic.core.internal.process;

import io.binomic.core.Worker;
import io.binomic.core.internal.worker.WorkerRuntime;
import java.time.Duration;
import java.util.Optional;

/**
 * A worker's stop for a front end that logs through its own framework: the core's last line (its
 * counts, the tasks cut off by the grace, the outcomes given up) returned instead of logged, since a
 * framework may have shut its bridge of the core's System.Logger by then (Spring Boot removes its
 * java.util.logging bridge when the context starts closing).
 */
public final class WorkerStop {
    private WorkerStop() { }

    /**
     * Stops {@code worker} within {@code grace} (see {@link Worker#stop(Duration)}); its last line, or empty when the
     * worker is not the core's or another call stopped it.
     */
    public static Optional<String> stop(Worker worker, Duration grace) {
        if (worker instanceof WorkerRuntime runtime) {
            return Optional.ofNullable(runtime.stopWithoutLastLine(grace));
        }
        worker.stop(grace);
        return Optional.empty();
    }
}
