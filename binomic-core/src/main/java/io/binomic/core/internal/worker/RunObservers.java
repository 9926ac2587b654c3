package io.binomic.core.internal.worker;

import io.binomic.api.TaskContext;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.Run;
import io.binomic.api.spi.RunObserver.RunOutcome;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The run observers of a client's workers as one, each call guarded: an observer that throws is
 * logged and skipped, so that tracing or metrics can never change a job's outcome. Observers may be
 * added and removed while workers run; a run is told by those there when it started, to its end.
 */
public final class RunObservers {
    private static final System.Logger LOG = System.getLogger(RunObservers.class.getName());
    private final List<RunObserver> observers;

    public RunObservers(List<RunObserver> observers) {
        this.observers = new CopyOnWriteArrayList<>(observers);
    }

    public void add(RunObserver observer) { observers.add(observer); }

    public void remove(RunObserver observer) { observers.remove(observer); }

    /** The observers' view of a run; null when there is none, so that a run without observers costs a null check. */
    public Run started(TaskContext job) {
        if (observers.isEmpty()) {
            return null;
        }
        List<Run> runs = new ArrayList<>(observers.size());
        eachGuarded(observers, observer -> runs.add(observer.started(job)),
                observer -> "run observer " + observer.getClass().getName() + " failed at the start of " + job);
        return new Runs(runs);
    }

    /** Calls {@code call} with each of {@code all}; one that throws is logged ({@code failure}) and the others still called. */
    private static <T> void eachGuarded(List<T> all, Consumer<T> call, Function<T, String> failure) {
        for (T t : all) {
            try {
                call.accept(t);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, failure.apply(t), e);
            }
        }
    }

    private record Runs(List<Run> runs) implements Run {
        @Override
        public Runnable enter() {
            List<Runnable> exits = new ArrayList<>(runs.size());
            eachGuarded(runs, run -> exits.add(run.enter()), run -> "run observer failed before the handler");
            return () -> eachGuarded(exits.reversed(), Runnable::run, exit -> "run observer failed after the handler");
        }

        @Override
        public void ended(RunOutcome outcome, Optional<Throwable> failure) {
            eachGuarded(runs, run -> run.ended(outcome, failure), run -> "run observer failed at the end of a run");
        }
    }
}
