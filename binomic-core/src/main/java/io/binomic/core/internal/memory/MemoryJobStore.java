package io.binomic.core.internal.memory;

import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The job records of the memory broker, under its lock: created when a tracked message is stored,
 * updated by the settlements that end its attempts, expired when next looked at. Events are
 * published under the lock and delivered after it is released.
 */
final class MemoryJobStore implements JobStore {

    private final MemoryState state;
    /** Job records by queue and id; an expired record is removed when next looked at. */
    private final Map<String, Map<UUID, StoredJob>> jobs = new HashMap<>();
    private final Map<String, List<Consumer<JobEvent>>> jobListeners = new ConcurrentHashMap<>();
    /** Events published under the lock, delivered after it is released. */
    private final List<JobEvent> undelivered = new ArrayList<>();
    /** What else a cancel gives back (a unique key), under the lock; set once, before the broker is used. */
    private Consumer<UUID> onCancelled = id -> { };

    static final class StoredJob {
        final Map<String, String> fields = new HashMap<>();
        Instant expiresAt;
    }

    MemoryJobStore(MemoryState state) {
        this.state = state;
    }

    void onCancelled(Consumer<UUID> action) { this.onCancelled = action; }

    /** Creates (or, for a replay, resets) the record of a tracked message. Called under the lock. */
    void createJob(Message m, JobState jobState, Instant due) {
        if (!m.isTracked()) {
            return;
        }
        StoredJob rec = new StoredJob();
        rec.fields.put(JobRecords.STATE, jobState.name());
        rec.fields.put(JobRecords.TASK, m.task());
        rec.fields.put(JobRecords.ENQUEUED_AT, Long.toString(state.clock.instant().toEpochMilli()));
        rec.fields.put(JobRecords.RETENTION, m.trackForMillis());
        if (m.batch() != null) {
            rec.fields.put(JobRecords.BATCH, m.batch().toString());
        }
        if (m.workflow() != null) {
            rec.fields.put(JobRecords.WORKFLOW, m.workflow().toString());
        }
        if (due != null) {
            rec.fields.put(JobRecords.DUE, Long.toString(due.toEpochMilli()));
        }
        jobs.computeIfAbsent(m.queue(), k -> new HashMap<>()).put(m.id(), rec);
    }

    /**
     * Marks job {@code id} cancel-requested, under the state's lock (held by the caller): a start
     * then ends it CANCELLED instead of running it, as {@link #startJobs} does for such a record.
     */
    void requestCancel(String queue, UUID id) {
        StoredJob rec = job(queue, id);
        if (rec != null && !stateOf(rec).isFinal()) {
            rec.fields.put(JobRecords.CANCEL_REQUESTED, "1");
        }
    }

    /**
     * Ends job {@code id} CANCELLED without a settlement (a job of a workflow that will not be
     * enqueued), unless it ended already. Called under the lock.
     */
    void endCancelled(String queue, UUID id) {
        StoredJob rec = job(queue, id);
        if (rec != null && !stateOf(rec).isFinal()) {
            rec.fields.put(JobRecords.STATE, JobState.CANCELLED.name());
            rec.fields.put(JobRecords.ENDED_AT, Long.toString(state.clock.instant().toEpochMilli()));
            expireAfterRetention(rec);
            undelivered.add(new JobEvent(queue, id, JobEvent.Kind.ENDED));
        }
    }

    /**
     * Sets when the record of {@code id} goes, if it is there: never while {@code keepForMillis} is
     * negative, else that long from now or for its own retention, whichever is longer. A workflow
     * keeps the records of its jobs while its own record is kept. Called under the lock.
     */
    void keepRecord(String queue, UUID id, long keepForMillis) {
        StoredJob rec = job(queue, id);
        if (rec != null) {
            rec.expiresAt = keepForMillis < 0 ? null : state.clock.instant().plusMillis(Math.max(keepForMillis,
                    Long.parseLong(rec.fields.getOrDefault(JobRecords.RETENTION, "3600000"))));
        }
    }

    /** The live record of {@code id}, or null. Called under the lock. */
    StoredJob job(String queue, UUID id) {
        Map<UUID, StoredJob> byId = jobs.get(queue);
        if (byId == null) {
            return null;
        }
        StoredJob rec = byId.get(id);
        if (rec != null && rec.expiresAt != null && !state.clock.instant().isBefore(rec.expiresAt)) {
            byId.remove(id);
            return null;
        }
        return rec;
    }

    /** Applies {@code update}, creating the record if missing. Called under the lock. */
    void applyJob(JobUpdate update) {
        StoredJob rec = job(update.queue(), update.id());
        if (rec == null) {
            rec = new StoredJob();
            jobs.computeIfAbsent(update.queue(), k -> new HashMap<>()).put(update.id(), rec);
        }
        rec.fields.putAll(update.set());
        update.delete().forEach(rec.fields::remove);
        if (!update.expireAfter().isZero()) {
            rec.expiresAt = state.clock.instant().plus(update.expireAfter());
        }
        if (update.ends()) {
            undelivered.add(new JobEvent(update.queue(), update.id(), JobEvent.Kind.ENDED));
        }
    }

    static JobState stateOf(StoredJob rec) {
        try {
            return JobState.valueOf(rec.fields.getOrDefault(JobRecords.STATE, "UNKNOWN"));
        } catch (IllegalArgumentException e) {
            return JobState.UNKNOWN;
        }
    }

    /** Keeps an ended record for the retention its job was submitted with. Called under the lock. */
    private void expireAfterRetention(StoredJob rec) {
        rec.expiresAt = state.clock.instant().plusMillis(Long.parseLong(rec.fields.getOrDefault(JobRecords.RETENTION, "3600000")));
    }

    @Override
    public Optional<JobRecord> readJob(String queue, UUID id) {
        return state.locked(() -> {
            StoredJob rec = job(queue, id);
            return rec == null ? Optional.<JobRecord>empty() : Optional.of(new JobRecord(rec.fields));
        });
    }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        Set<UUID> result = state.locked(() -> {
            Set<UUID> notStarted = new HashSet<>();
            String now = Long.toString(state.clock.instant().toEpochMilli());
            for (JobUpdate start : starts) {
                StoredJob rec = job(start.queue(), start.id());
                if (rec != null && (stateOf(rec).isFinal())) {
                    notStarted.add(start.id());
                    continue;
                }
                if (rec != null && stateOf(rec) == JobState.RUNNING) {
                    recordAbandoned(rec, now);
                }
                if (rec != null && "1".equals(rec.fields.get(JobRecords.CANCEL_REQUESTED))) {
                    // Cancelled while an earlier attempt ran on a worker that stopped: it ends here, not run again.
                    rec.fields.put(JobRecords.STATE, JobState.CANCELLED.name());
                    rec.fields.put(JobRecords.ENDED_AT, now);
                    expireAfterRetention(rec);
                    undelivered.add(new JobEvent(start.queue(), start.id(), JobEvent.Kind.ENDED));
                    notStarted.add(start.id());
                    continue;
                }
                applyJob(start);
            }
            return notStarted;
        });
        deliverJobEvents();
        return result;
    }

    /** The attempt that was running never ended: its worker stopped, and it was reclaimed. */
    private static void recordAbandoned(StoredJob rec, String now) {
        String attempt = rec.fields.get("attempt");
        if (attempt != null && !rec.fields.containsKey("a." + attempt)) {
            rec.fields.put("a." + attempt, String.join("\t", rec.fields.getOrDefault("worker", ""),
                    rec.fields.getOrDefault("startedAt", now), now, "abandoned", "its worker stopped before it ended; the job was reclaimed"));
        }
    }

    @Override
    public void updateRunningJob(JobUpdate update) {
        state.locked(() -> {
            StoredJob rec = job(update.queue(), update.id());
            if (rec != null && stateOf(rec) == JobState.RUNNING) {
                applyJob(update);
            }
        });
        deliverJobEvents();
    }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        JobHandle.CancelOutcome outcome = state.locked(() -> {
            StoredJob rec = job(cancelled.queue(), cancelled.id());
            if (rec == null) {
                return JobHandle.CancelOutcome.NOT_FOUND;
            }
            JobState jobState = stateOf(rec);
            if (jobState.isFinal()) {
                return JobHandle.CancelOutcome.ALREADY_ENDED;
            }
            if (jobState == JobState.RUNNING) {
                rec.fields.put(JobRecords.CANCEL_REQUESTED, "1");
                undelivered.add(new JobEvent(cancelled.queue(), cancelled.id(), JobEvent.Kind.CANCEL_REQUESTED));
                return JobHandle.CancelOutcome.CANCEL_REQUESTED;
            }
            applyJob(cancelled);
            rec.fields.put(JobRecords.CANCELLED_BY_ID, "1");
            expireAfterRetention(rec);
            onCancelled.accept(cancelled.id());
            return JobHandle.CancelOutcome.CANCELLED;
        });
        deliverJobEvents();
        return outcome;
    }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        List<Consumer<JobEvent>> listeners = jobListeners.computeIfAbsent(queue, k -> new CopyOnWriteArrayList<>());
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** Delivers the events published under the lock, outside it (a listener may call back into the broker). */
    void deliverJobEvents() {
        List<JobEvent> events = state.locked(() -> {
            if (undelivered.isEmpty()) {
                return List.<JobEvent>of();
            }
            List<JobEvent> copy = List.copyOf(undelivered);
            undelivered.clear();
            return copy;
        });
        for (JobEvent event : events) {
            for (Consumer<JobEvent> listener : jobListeners.getOrDefault(event.queue(), List.of())) {
                try {
                    listener.accept(event);
                } catch (RuntimeException e) {
                    state.log.log(System.Logger.Level.WARNING, "a job event listener failed: {0}", e.toString());
                }
            }
        }
    }
}
