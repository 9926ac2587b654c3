package io.binomic.core.internal.memory;

import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.QueueLimits;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.PauseState;
import io.binomic.core.internal.memory.MemoryJobStore.StoredJob;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import io.binomic.core.internal.memory.MemoryState.Scheduled;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Rate and concurrency limits of the memory broker (the decisions are {@link MemoryLimits}'), under
 * its lock: a delivery held back is acked and waits in the delayed set, atomically with the decision.
 */
final class MemoryFlowLimits implements FlowLimits {

    private final MemoryState state;
    private final MemoryJobStore jobs;
    private final Map<String, QueueLimits> queueLimits = new HashMap<>();
    private final MemoryLimits limits;

    MemoryFlowLimits(MemoryState state, MemoryJobStore jobs) {
        this.state = state;
        this.jobs = jobs;
        this.limits = new MemoryLimits(new MemoryLimits.Store() {
            @Override
            public Object delay(String queue, Message message, long dueMillis) {
                return state.delay(queue, message, dueMillis);
            }

            @Override
            public boolean moveNow(String queue, Object handle) {
                Message m = state.queue(queue).delayed.remove((Scheduled) handle);
                if (m == null) {
                    return false;
                }
                Message turn = m.withTurn(true);
                state.addReady(queue, turn.withAttempt(m.attempt(), state.clock.instant()));
                state.messageArrived.signalAll();
                return true;
            }
        });
    }

    /** Releases the concurrency slots the settled delivery {@code receipt} held, if any. Called under the lock. */
    void release(String queue, String receipt) {
        limits.release(queue, receipt);
    }

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests) {
        return state.locked(() -> {
            List<Admission> decisions = new ArrayList<>(requests.size());
            for (var request : requests) {
                Delivery d = request.delivery();
                QueueState q = state.queue(d.queue());
                if (!MemoryState.owns(q.pending.get(d.receipt()), consumer, d)) {
                    decisions.add(new Admission(d, Admission.Decision.NOT_PENDING, Optional.empty()));
                    continue;
                }
                var admission = limits.decide(request, state.clock.millis());
                if (admission.decision() != Admission.Decision.RUN) {
                    q.pending.remove(d.receipt()); // acked: it waits in the delayed set
                    Message m = d.message().orElseThrow();
                    StoredJob rec = m.isTracked() ? jobs.job(d.queue(), m.id()) : null;
                    if (rec != null && !MemoryJobStore.stateOf(rec).isFinal()) {
                        rec.fields.put(JobRecords.STATE, JobState.SCHEDULED.name());
                        rec.fields.put(JobRecords.DUE, Long.toString(admission.dueAt().orElseThrow().toEpochMilli()));
                        rec.fields.put("waiting", admission.decision() == Admission.Decision.WAIT_RATE
                                ? "rate limit" : "concurrency limit");
                    }
                }
                decisions.add(admission);
            }
            return decisions;
        });
    }

    @Override
    public int slotsHeld(String queue, String limitId) {
        return state.locked(() -> limits.slotsHeld(queue, limitId));
    }

    @Override
    public Map<String, QueueLimits> queueLimits(List<String> names) {
        return state.locked(() -> MemoryState.present(queueLimits, names));
    }

    @Override
    public void setQueueLimits(String queue, QueueLimits set) {
        Objects.requireNonNull(set, "limits must not be null");
        state.locked(() -> {
            MemoryState.setOrClear(queueLimits, queue, set, set.isEmpty());
            // what the old limits held back is decided on again under the new ones
            limits.queueLimitsChanged(queue, FlowLimit.QUEUE_LIMIT_ID);
            QueueState q = state.queue(queue);
            long now = state.clock.millis();
            state.dueNow(q, q.delayed.entrySet().stream()
                    .filter(e -> e.getKey().dueMillis() > now && e.getKey().dueMillis() < PauseState.PARKED_UNTIL.toEpochMilli()
                            && e.getValue().rateAdmittedAttempt().isPresent())
                    .limit(10_000).toList(), now);
            state.messageArrived.signalAll();
        });
    }
}
