package io.binomic.core.internal.worker;

import io.binomic.api.Uniqueness;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A worker's side of pause and unique jobs. It reads the paused state of its queues at most every
 * {@value #REFRESH_MILLIS} ms (one round trip for all of them, never one per fetch) and keeps the
 * last answer when the broker cannot give one; leaves wholly paused queues out of fetches; parks the
 * messages of a paused queue or task it was handed anyway (a fetch already blocking when the pause
 * came, a reclaim) as a {@link Settlement.RetryLater} due at {@link PauseState#PARKED_UNTIL} with
 * their attempt unchanged, which {@code resume} makes due again; and gives back, in one round trip
 * per fetch, the keys of the {@link Uniqueness.Scope#WHILE_QUEUED} jobs it starts.
 *
 * <p>Every start is checked against a view of the paused state at most {@value #REFRESH_MILLIS} ms
 * old, under a lock that a pause made in this JVM takes too ({@link #pauseWritten}): once that
 * pause has read the new state here, nothing of the paused queue or task starts on this worker.
 */
final class FlowGate {
    private static final System.Logger LOG = System.getLogger(FlowGate.class.getName());
    /** The figure {@link io.binomic.core.Queues#REFRESH_MILLIS} promises other processes. */
    static final long REFRESH_MILLIS = io.binomic.core.Queues.REFRESH_MILLIS;

    private final Optional<Pausing> pausing;
    private final Optional<UniqueSubmits> uniqueSubmits;
    private volatile List<String> queues;
    private final String consumer;
    private volatile Map<String, PauseState> states = Map.of();
    private volatile long refreshedNanos;
    /** Counts the reads and changes of queues, under {@link #starts}: a read made without it is used only if none came in between. */
    private volatile long generation;
    private volatile boolean anyPaused;
    /** Queues whose pause was lifted, with how many refreshes still unpark them (see {@link Pausing#unpark}). */
    private final Map<String, Integer> unparking = new HashMap<>();
    /** Held by each start and by each read of the paused state, so a start never uses a view older than a local pause. */
    private final ReentrantLock starts = new ReentrantLock();

    FlowGate(Broker broker, List<String> queues, String consumer) {
        this.pausing = broker.capability(Pausing.class);
        this.uniqueSubmits = broker.capability(UniqueSubmits.class);
        this.queues = List.copyOf(queues);
        this.consumer = consumer;
        this.refreshedNanos = System.nanoTime() - REFRESH_MILLIS * 2_000_000;
    }

    /** The queues to read from now on (partitions were added); their paused state is read at once. */
    void queues(List<String> now) {
        starts.lock();
        try {
            generation++;
            queues = List.copyOf(now);
            refreshedNanos = System.nanoTime() - REFRESH_MILLIS * 2_000_000;
        } finally {
            starts.unlock();
        }
    }

    private void refreshIfStale() {
        if (System.nanoTime() - refreshedNanos < REFRESH_MILLIS * 1_000_000) {
            return;
        }
        starts.lock();
        try {
            if (System.nanoTime() - refreshedNanos >= REFRESH_MILLIS * 1_000_000) {
                refresh();
            }
        } finally {
            starts.unlock();
        }
    }

    /**
     * Reads the paused state again once half of {@value #REFRESH_MILLIS} ms has passed, off the
     * fetch thread (so a fetch or a start seldom finds the view stale and waits for the read), and
     * without holding {@link #starts} during the read, so starts go on meanwhile. The answer is
     * used only if no other read (a local pause's, a stale view's) or change of queues came in
     * between: an answer older than one already used is dropped.
     */
    void refreshAhead() {
        long readNanos = System.nanoTime();
        if (readNanos - refreshedNanos < REFRESH_MILLIS * 500_000) {
            return;
        }
        long before = generation;
        List<String> of = queues;
        Map<String, PauseState> read;
        try {
            read = readStates(of);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "worker {0}: reading the paused queues failed ({1}); keeping the last state", consumer, e.getMessage());
            read = null;
        }
        starts.lock();
        try {
            if (generation != before || queues != of) {
                return;
            }
            generation++;
            refreshedNanos = readNanos;
            if (read != null) {
                use(read);
            }
        } finally {
            starts.unlock();
        }
    }

    private Map<String, PauseState> readStates(List<String> of) {
        // a queue the answer leaves out is not paused
        return Map.copyOf(pausing.map(p -> p.pauseStates(of)).orElse(Map.of()));
    }

    /** Reads the paused state of this worker's queues, under {@link #starts}; false when the broker did not answer. */
    private boolean refresh() {
        generation++;
        refreshedNanos = System.nanoTime();
        try {
            use(readStates(queues));
            return true;
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "worker {0}: reading the paused queues failed ({1}); keeping the last state", consumer, e.getMessage());
            return false;
        }
    }

    /** Takes {@code read} as the paused state, under {@link #starts}. */
    private void use(Map<String, PauseState> read) {
        boolean paused = read.values().stream().anyMatch(s -> !s.isEmpty());
        for (Map.Entry<String, PauseState> e : states.entrySet()) {
            PauseState was = e.getValue();
            PauseState is = read.getOrDefault(e.getKey(), PauseState.NONE);
            if ((was.queuePaused() && !is.queuePaused()) || !is.pausedTasks().containsAll(was.pausedTasks())) {
                unparking.put(e.getKey(), 2);
            }
        }
        unparkLifted();
        if (paused != anyPaused) {
            LOG.log(Level.INFO, "worker {0}: paused now: {1}", consumer, paused ? read : "nothing");
        }
        states = read;
        anyPaused = paused;
    }

    /**
     * A pause of {@code task} (or of the whole queue when empty) was written to {@code written}
     * queues by this JVM: when this returns, nothing it pauses starts here. The state is read
     * again from this worker's own broker, so a worker of another broker that has a queue of the
     * same name stays as it is. When the read fails the pause is held as written until a read
     * succeeds: a start is better held back a refresh too long than let through.
     */
    void pauseWritten(List<String> written, Optional<String> task) {
        List<String> ours = written.stream().filter(queues::contains).toList();
        if (ours.isEmpty() || pausing.isEmpty()) {
            return;
        }
        starts.lock();
        try {
            if (refresh()) {
                return;
            }
            Map<String, PauseState> held = new HashMap<>(states);
            for (String queue : ours) {
                PauseState was = held.getOrDefault(queue, PauseState.NONE);
                Set<String> tasks = new HashSet<>(was.pausedTasks());
                task.ifPresent(tasks::add);
                held.put(queue, new PauseState(was.queuePaused() || task.isEmpty(), tasks));
            }
            states = Map.copyOf(held);
            anyPaused = true;
        } finally {
            starts.unlock();
        }
    }

    /**
     * Runs {@code start} with {@code d} unless its queue or task is paused, in one step against a
     * pause made in this JVM; false, having run nothing, when it is paused.
     */
    boolean startUnlessPaused(Delivery d, Consumer<Delivery> start) {
        starts.lock();
        try {
            refreshIfStale();
            if (paused(d)) {
                return false;
            }
            start.accept(d);
            return true;
        } finally {
            starts.unlock();
        }
    }

    /**
     * Makes due what this worker (with a view up to a refresh old) may have parked just after a
     * resume: at the refresh that sees the pause lifted and at the next one.
     */
    private void unparkLifted() {
        var it = unparking.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, Integer> e = it.next();
            pausing.ifPresent(p -> p.unpark(e.getKey()));
            if (e.getValue() <= 1) {
                it.remove();
            } else {
                e.setValue(e.getValue() - 1);
            }
        }
    }

    /** The queues to fetch from: all but the wholly paused ones. */
    List<String> fetchable() {
        refreshIfStale();
        if (!anyPaused) {
            return queues;
        }
        Map<String, PauseState> now = states;
        return queues.stream().filter(q -> !now.getOrDefault(q, PauseState.NONE).queuePaused()).toList();
    }

    /** True when {@code d} must not run now: its queue or its task is paused. */
    boolean paused(Delivery d) {
        if (!anyPaused) {
            return false;
        }
        PauseState s = states.getOrDefault(d.queue(), PauseState.NONE);
        if (s.queuePaused()) {
            return d.message().isPresent(); // a malformed delivery runs no handler: let it be dead-lettered
        }
        return d.message().map(m -> s.pausedTasks().contains(m.task())).orElse(false);
    }

    /** The settlement that parks {@code d} until its queue or task is resumed: no attempt used. */
    static Settlement park(Delivery d) {
        return new Settlement.RetryLater(d, d.message().orElseThrow(), PauseState.PARKED_UNTIL);
    }

    /** The deliveries that may run, after a fresh look at the paused state; {@code parking} gets the others. */
    List<Delivery> admit(List<Delivery> deliveries, Consumer<Delivery> parking) {
        if (deliveries.isEmpty()) {
            return deliveries;
        }
        refreshIfStale();
        List<Delivery> run = deliveries;
        if (anyPaused) {
            run = new ArrayList<>(deliveries.size());
            for (Delivery d : deliveries) {
                if (paused(d)) {
                    parking.accept(d);
                } else {
                    run.add(d);
                }
            }
        }
        releaseUniqueKeys(run);
        return run;
    }

    /** Gives back the keys of the while-queued jobs about to start (at most one round trip). */
    private void releaseUniqueKeys(List<Delivery> starting) {
        List<Message> release = null;
        for (Delivery d : starting) {
            if (d.message().isEmpty() || d.message().get().unique().isEmpty()) {
                continue;
            }
            Message m = d.message().get();
            if (UniqueClaim.of(m).map(c -> c.scope() == Uniqueness.Scope.WHILE_QUEUED).orElse(false)) {
                if (release == null) {
                    release = new ArrayList<>();
                }
                release.add(m);
            }
        }
        if (release == null || uniqueSubmits.isEmpty()) {
            return;
        }
        try {
            uniqueSubmits.get().releaseUniqueAtStart(release);
        } catch (RuntimeException e) {
            // The job runs anyway; its key goes at its end or with its time-to-live.
            LOG.log(Level.WARNING, "worker {0}: giving back the unique keys of {1} starting job(s) failed ({2}); they go when the jobs"
                    + " end or their time-to-live passes", consumer, release.size(), e.getMessage());
        }
    }
}
