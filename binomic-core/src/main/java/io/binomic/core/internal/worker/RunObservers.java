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

    public void add(RunObserver observer) {
        observers.add(observer);
    }

    public void remove(RunObserver observer) {
        observers.remove(observer);
    }

    /** The observers' view of a run; null when there is none, so that a run without observers costs a null check. */
    public Run started(TaskContext job) {
        if (observers.isEmpty()) {
            return null;
        }
        List<Run> runs = new ArrayList<>(observers.size());
        for (RunObserver observer : observers) {
            try {
                runs.add(observer.started(job));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "run observer " + observer.getClass().getName() + " failed at the start of " + job, e);
            }
        }
        return new Runs(runs);
    }

    private record Runs(List<Run> runs) implements Run {
        @Override
        public Runnable enter() {
            List<Runnable> exits = new ArrayList<>(runs.size());
            for (Run run : runs) {
                try {
                    exits.add(run.enter());
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "run observer failed before the handler", e);
                }
            }
            return () -> {
                for (Runnable exit : exits.reversed()) {
                    try {
                        exit.run();
                    } catch (RuntimeException e) {
                        LOG.log(Level.WARNING, "run observer failed after the handler", e);
                    }
                }
            };
        }

        @Override
        public void ended(RunOutcome outcome, Optional<Throwable> failure) {
            for (Run run : runs) {
                try {
                    run.ended(outcome, failure);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "run observer failed at the end of a run", e);
                }
            }
        }
    }
}
