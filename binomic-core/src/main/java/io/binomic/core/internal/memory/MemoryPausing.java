package io.binomic.core.internal.memory;

import io.binomic.api.spi.Message;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import io.binomic.core.internal.memory.MemoryState.Scheduled;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Paused queues and tasks of the memory broker, under its lock. A paused job is parked in the
 * delayed set (due at {@link PauseState#PARKED_UNTIL}); a resume makes the parked jobs it frees due now.
 */
final class MemoryPausing implements Pausing {

    private final MemoryState state;
    /** Paused tasks by queue; "*" is the whole queue. */
    private final Map<String, Set<String>> paused = new HashMap<>();

    MemoryPausing(MemoryState state) {
        this.state = state;
    }

    @Override
    public Map<String, PauseState> pauseStates(List<String> names) {
        return state.locked(() -> {
            Map<String, PauseState> out = new LinkedHashMap<>();
            for (String name : names) {
                Set<String> p = paused.getOrDefault(name, Set.of());
                Set<String> tasks = new HashSet<>(p);
                tasks.remove("*");
                out.put(name, p.isEmpty() ? PauseState.NONE : new PauseState(p.contains("*"), tasks));
            }
            return out;
        });
    }

    @Override
    public void pause(String name, Optional<String> task) {
        state.locked(() -> paused.computeIfAbsent(name, n -> new HashSet<>()).add(task.orElse("*")));
    }

    @Override
    public void unpark(String name) { resume(name, Optional.of("")); }

    @Override
    public long parked(String name) {
        return state.locked(() -> (long) state.queue(name).delayed
                .tailMap(new Scheduled(PauseState.PARKED_UNTIL.toEpochMilli(), 0), true).size());
    }

    @Override
    public void resume(String name, Optional<String> task) {
        state.locked(() -> {
            Set<String> p = paused.getOrDefault(name, new HashSet<>());
            p.remove(task.orElse("*"));
            QueueState q = state.queue(name);
            List<Map.Entry<Scheduled, Message>> due = q.delayed.tailMap(new Scheduled(PauseState.PARKED_UNTIL.toEpochMilli(), 0), true)
                    .entrySet().stream().filter(e -> !p.contains("*") && !p.contains(e.getValue().task())).toList();
            state.dueNow(q, due, state.clock.instant().toEpochMilli());
        });
    }
}
