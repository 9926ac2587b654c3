package io.binomic.spring.boot.autoconfigure;

import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.process.WorkerStop;
import java.time.Duration;
import java.util.Optional;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the application's worker with the application context: it starts once every bean is ready
 * (so handlers and the metrics binder are in place) and, at shutdown, stops fetching, lets running
 * tasks finish within the grace and returns, before the beans the handlers use are destroyed. The
 * grace is the worker's {@code shutdown-grace}, cut to fit {@code spring.lifecycle.timeout-per-shutdown-phase}:
 * the context would otherwise stop waiting first, and close the broker under tasks still settling.
 *
 * <p>Its phase ({@link #PHASE}) puts the drain after the web server's graceful shutdown (phase
 * {@code DEFAULT_PHASE - 1024}), which stops taking requests and lets those in flight finish, and
 * before the web server stops ({@code DEFAULT_PHASE - 2048}): a request still running can submit
 * jobs, and a drain of many seconds does not hold back the graceful shutdown of HTTP.
 */
public class BinomicWorkerLifecycle implements SmartLifecycle {
    /** Between Spring Boot's web server graceful shutdown and its web server stop: see the class comment. */
    public static final int PHASE = DEFAULT_PHASE - 1536;
    private static final Log LOG = LogFactory.getLog(BinomicWorkerLifecycle.class);
    /**
     * Kept of the phase timeout after the grace: a worker's stop takes up to 1.5 s beyond its grace (interrupting
     * what still runs, writing the last outcomes or giving them up when the broker does not answer), then returns.
     */
    private static final Duration MARGIN = Duration.ofSeconds(2);

    private final Binomic binomic;
    private final WorkerConfig config;
    private final Duration grace;
    private final boolean enabled;
    private volatile Worker worker;

    /**
     * A lifecycle that runs a worker of {@code binomic} with {@code config}, stopped within
     * {@code phaseTimeout}; when not {@code enabled} (nothing to read), it starts none.
     */
    public BinomicWorkerLifecycle(Binomic binomic, WorkerConfig config, Duration phaseTimeout, boolean enabled) {
        this.binomic = binomic;
        this.config = config;
        this.enabled = enabled;
        Duration fit = phaseTimeout.minus(MARGIN);
        if (fit.compareTo(config.shutdownGrace()) < 0) {
            LOG.warn("binomic.worker.shutdown-grace (" + config.shutdownGrace() + ") does not fit in"
                    + " spring.lifecycle.timeout-per-shutdown-phase (" + phaseTimeout + "): running tasks get " + fit
                    + "; raise the phase timeout to give them the whole grace");
            this.grace = fit.isNegative() ? Duration.ZERO : fit;
        } else {
            this.grace = config.shutdownGrace();
        }
    }

    @Override
    public synchronized void start() {
        if (enabled && (worker == null || worker.isStopped())) {
            worker = binomic.startWorker(config);
        }
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public void stop() {
        Worker w = worker;
        if (w != null) {
            drain(w);
        }
    }

    /**
     * Logged here through Spring's logging: Boot removes its java.util.logging bridge when the
     * context starts closing, which drops the core's own System.Logger lines of the drain. So the
     * last line is the core's, with its counts: the tasks cut off by the grace (put back, attempt
     * unchanged) and the outcomes given up, which a line of the time taken alone would hide.
     */
    private void drain(Worker w) {
        long start = System.nanoTime();
        WorkerCounters before = w.counters();
        LOG.info("Binomic worker " + w.consumerName() + " draining: " + before.inFlight() + " task(s) running, "
                + before.held() + " outcome(s) held, waiting up to " + grace);
        Optional<String> last = WorkerStop.stop(w, grace);
        long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
        LOG.info(last.map(line -> "Binomic " + line).orElse("Binomic worker " + w.consumerName() + " stopped after " + millis + " ms"));
    }

    @Override
    public void stop(Runnable callback) {
        Worker w = worker;
        if (w == null) {
            callback.run();
            return;
        }
        // Tasks finishing can take the whole grace: stop beside the other lifecycles of this phase, not after them.
        Thread.ofPlatform().name("binomic-worker-stop").start(() -> {
            try {
                drain(w);
            } finally {
                callback.run();
            }
        });
    }

    @Override
    public boolean isRunning() {
        Worker w = worker;
        return w != null && !w.isStopped();
    }

    /** The running worker, if started and not stopped. */
    public Optional<Worker> worker() {
        return Optional.ofNullable(worker).filter(w -> !w.isStopped());
    }

    /** How long stopping waits for running tasks. */
    public Duration grace() {
        return grace;
    }
}
