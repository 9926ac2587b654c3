package io.binomic.core.internal.worker;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * What a worker keeps about the tracked jobs it runs: which were marked started with their fetch,
 * which thread runs each handler, and which a submitter asked to cancel. The handler threads, the
 * fetcher and the cancel listener meet here, so a cancel interrupts a handler and never a thread
 * already recording its outcome.
 */
final class TrackedJobs implements JobTracking.WorkerHooks {
    private static final System.Logger LOG = System.getLogger(TrackedJobs.class.getName());

    private final WorkerContext context;
    private final boolean enabled;
    /** Receipts of running deliveries whose submitter asked to cancel them. */
    private final Set<String> cancelRequested = ConcurrentHashMap.newKeySet();
    /** Tracked jobs of the last fetches, marked started in one round trip and not yet running: whether each may run. */
    private final Map<UUID, BulkStart> startedInBulk = new ConcurrentHashMap<>();
    /** Keys of running deliveries another worker took over (their lease lapsed): the worker stops them and drops their outcomes. */
    private final Set<String> leaseLost = ConcurrentHashMap.newKeySet();
    /** Threads running a handler, by delivery key: the only ones a cancel interrupts (not one recording its outcome). */
    private final Map<String, Thread> inHandler = new ConcurrentHashMap<>();
    /** The dispatcher's check, just before a handler is called, that its delivery is still this worker's. */
    private volatile Predicate<Delivery> stillOursToRun = d -> true;
    /** The dispatcher's check, just before a handler is called, that the start a rate limit admitted it for is not long past. */
    private volatile Predicate<Delivery> lateForItsStart = d -> false;

    /** @param enabled whether any task the worker runs is tracked */
    TrackedJobs(WorkerContext context, boolean enabled) {
        this.context = context;
        this.enabled = enabled;
    }

    /** Whether any task the worker runs is tracked: else there are no records to mark, nor cancels to hear. */
    boolean enabled() { return enabled; }

    @Override
    public void started(String key, Thread thread) { inHandler.put(key, thread); }

    @Override
    public void ended(String key) { inHandler.remove(key); }

    @Override
    public Boolean startedWithItsFetch(UUID id) {
        BulkStart start = startedInBulk.remove(id);
        return start == null ? null : start.mayRun();
    }

    @Override
    public boolean stopping() { return !context.active().getAsBoolean(); }

    boolean cancelRequested(String key) { return cancelRequested.contains(key); }

    @Override
    public boolean leaseLost(String key) { return leaseLost.contains(key); }

    @Override
    public boolean stillOursToRun(Delivery delivery) { return stillOursToRun.test(delivery); }

    @Override
    public boolean lateForItsStart(Delivery delivery) { return lateForItsStart.test(delivery); }

    /**
     * Has the handlers' last checks before they are called made by {@code ours} (still this worker's)
     * and {@code late} (past its admitted start): the dispatcher's, built after these hooks.
     */
    void checkBeforeRunWith(Predicate<Delivery> ours, Predicate<Delivery> late) {
        stillOursToRun = ours;
        lateForItsStart = late;
    }

    /** Marks the running delivery with this key as taken over by another worker; false if it was already. */
    boolean markLeaseLost(String key) { return leaseLost.add(key); }

    /**
     * Marks job {@code id} cancelled when it was marked started with its fetch and its run has not
     * begun: its handler is then never called. A run leaves this map only after the dispatcher lists
     * it as running, so a cancel that checks here first and then the running ones misses no job whose
     * record says it runs on this worker.
     */
    void requestCancelBeforeRun(UUID id) {
        BulkStart start = startedInBulk.get(id);
        if (start != null) {
            cancelRequested.add(start.key());
        }
    }

    /** Marks the delivery's job cancelled and interrupts its handler, if it is in it. */
    void requestCancel(String key) {
        cancelRequested.add(key);
        // Atomic with the handler's end: a thread already recording its outcome is left alone.
        inHandler.computeIfPresent(key, (r, thread) -> {
            thread.interrupt();
            return thread;
        });
    }

    /** Forgets what was kept of {@code d}, whose run ended (or never reached its start). */
    void forget(Delivery d) {
        cancelRequested.remove(d.key());
        leaseLost.remove(d.key());
        if (enabled) {
            d.message().ifPresent(m -> startedInBulk.remove(m.id())); // one that never reached its start
        }
    }

    /**
     * Marks the tracked jobs of one fetch started in one round trip, instead of one each as their
     * handlers begin. A job marked here whose handler never runs (it is dead-lettered before it
     * runs) ends by its settlement like any other. One that waits for a reserved start under a rate
     * limit ({@code waiting}) is marked as its handler begins, not seconds before.
     */
    void startInBulk(List<Delivery> deliveries, Predicate<Delivery> waiting) {
        if (!enabled) {
            return;
        }
        List<JobUpdate> starts = new ArrayList<>();
        Map<UUID, String> keys = new HashMap<>();
        Instant now = context.clock().instant();
        for (Delivery d : deliveries) {
            if (waiting.test(d)) {
                continue;
            }
            d.message().filter(Message::isTracked).ifPresent(m -> {
                starts.add(JobRecordFormat.started(m, d.queue(), d.attempt(), context.consumerName(), now));
                keys.put(m.id(), d.key());
            });
        }
        if (starts.size() < 2) {
            return; // one job is marked as its handler begins, in the same single round trip
        }
        JobStore store = context.broker().capability(JobStore.class).orElse(null);
        if (store == null) {
            return; // each is let run as it starts: JobTracking reports the missing records once
        }
        try {
            Set<UUID> notStarted = store.startJobs(starts);
            for (var start : starts) {
                startedInBulk.put(start.id(), new BulkStart(keys.get(start.id()), !notStarted.contains(start.id())));
            }
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "worker {0}: marking {1} jobs started at once failed ({2}); each is marked as it starts",
                    context.consumerName(), starts.size(), e.getMessage());
        }
    }

    /** A job marked started with its fetch: the key of its delivery, and whether its record let it run. */
    private record BulkStart(String key, boolean mayRun) { }
}
