package io.binomic.it;

import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.spi.TaskProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The chaos suite's application, as the master's worker JVMs find it (through a
 * {@code META-INF/services} file that {@link ChaosIT} puts on their class path) and as the test's
 * clients declare it: the {@link TestApp} job on two queues, a DELAY variant, a variant under a
 * concurrency limit, an INTERVAL task, and the steps of the batches and workflows
 * ({@link ChaosFlows}). Its executions go to a {@link ChaosLedger} (the steps' to a
 * {@link ChaosFlowLedger}) in the directory named by {@value #LEDGER_PROPERTY}; without that property it declares nothing, so the
 * other tests that discover tasks are not affected.
 */
public final class ChaosJobs implements TaskProvider {
    static final String LEDGER_PROPERTY = "binomic.it.chaos.ledger";
    static final String TICK_PROPERTY = "binomic.it.chaos.tickMillis";
    static final String DELAY_PROPERTY = "binomic.it.chaos.delayMillis";

    static final String QUEUE_A = "chaos-a";
    static final String QUEUE_B = "chaos-b";
    static final String TICK_QUEUE = "chaos-ticks";
    static final List<String> QUEUES = List.of(QUEUE_A, QUEUE_B, TICK_QUEUE);

    static final String ON_A = "chaos-job-a";
    static final String ON_B = "chaos-job-b";
    static final String DELAYED = "chaos-job-delayed";
    static final String TICK = "chaos-tick";
    /** A task under a concurrency limit of {@value #LIMIT} across all worker JVMs. */
    static final String LIMITED = "chaos-job-limited";
    static final int LIMIT = 2;
    /** The job number a tick's execution is recorded under. */
    static final int TICK_N = -1;
    /** Between a planned failure and its retry. */
    static final Duration BACKOFF = Duration.ofMillis(300);

    @Override
    public List<TaskBinding<?, ?>> tasks() {
        String directory = System.getProperty(LEDGER_PROPERTY);
        if (directory == null) {
            return List.of();
        }
        List<TaskBinding<?, ?>> tasks = new java.util.ArrayList<>(tasks(new ChaosLedger(Path.of(directory)),
                Duration.ofMillis(Long.getLong(TICK_PROPERTY)), Duration.ofMillis(Long.getLong(DELAY_PROPERTY))));
        tasks.addAll(ChaosFlows.tasks(new ChaosFlowLedger(Path.of(directory))));
        return tasks;
    }

    /** The same definitions in every process: the worker JVMs, the two clients (which fire the ticks), the final sweep. */
    static List<Task<?, ?>> definitions(Duration tick, Duration delay) {
        List<Task<?, ?>> all = new java.util.ArrayList<>(jobDefinitions(tick, delay));
        all.addAll(ChaosFlows.definitions());
        return all;
    }

    private static List<Task<?, ?>> jobDefinitions(Duration tick, Duration delay) {
        return List.of(
                TestApp.job(ON_A, QUEUE_A, BACKOFF, null),
                TestApp.job(ON_B, QUEUE_B, BACKOFF, null),
                TestApp.job(DELAYED, QUEUE_B, BACKOFF, delay),
                TestApp.tick(TICK, TICK_QUEUE, tick),
                Task.builder(LIMITED, TestApp.Job.class).queue(QUEUE_A).maxAttempts(5)
                        .backoff(io.binomic.api.Backoff.fixed(BACKOFF)).concurrencyLimit(LIMIT).build());
    }

    /** The definitions bound to handlers that record in {@code ledger}: what runs them (the worker JVMs, the final sweep). */
    @SuppressWarnings("unchecked")
    static List<TaskBinding<?, ?>> tasks(TestApp.Runs ledger, Duration tick, Duration delay) {
        List<Task<?, ?>> definitions = jobDefinitions(tick, delay);
        return List.of(
                ((Task<TestApp.Job, Void>) definitions.get(0)).handledBy(TestApp.handler(ledger)),
                ((Task<TestApp.Job, Void>) definitions.get(1)).handledBy(TestApp.handler(ledger)),
                ((Task<TestApp.Job, Void>) definitions.get(2)).handledBy(TestApp.handler(ledger)),
                definitions.get(3).handledBy(TestApp.tickHandler(ledger, TICK_N)),
                ((Task<TestApp.Job, Void>) definitions.get(4)).handledBy(TestApp.handler(ledger)));
    }
}
