package io.binomic.it.process;

import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.spi.TaskProvider;
import java.util.List;

/**
 * The application that worker JVMs started by the master run in these tests, found through
 * {@code META-INF/services} like any application's tasks. Its one task records every execution
 * in a {@link Ledger} named by the system property {@value #LEDGER_PROPERTY} (the tests pass it
 * with the master's worker JVM options); without the property it binds nothing, so other
 * tests that discover tasks are not affected. The submitting side uses the definition alone,
 * {@link #job(String)}.
 */
public final class ProcessJobs implements TaskProvider {
    static final String LEDGER_PROPERTY = "binomic.it.process.ledger";
    static final String TASK = "process-job";

    /**
     * One unit of work.
     *
     * @param n the job's number, unique within a test
     * @param sleepMillis how long it runs
     */
    record Job(int n, long sleepMillis) { }

    @Override
    public List<TaskBinding<?, ?>> tasks() {
        String spec = System.getProperty(LEDGER_PROPERTY);
        if (spec != null && spec.contains(";")) {
            // Several queues, one ledger each (ClusterMasterAndCliTest): task names must differ.
            return java.util.Arrays.stream(spec.split(";")).map(Ledger::parse)
                    .<TaskBinding<?, ?>>map(l -> bind(jobOn(l.name()), l)).toList();
        }
        return spec == null ? List.of() : List.of(binding(Ledger.parse(spec)));
    }

    /** The task of one of several queues: {@code process-job-<queue>}. */
    static Task<Job, Void> jobOn(String queue) {
        return Task.builder(TASK + "-" + queue, Job.class).queue(queue).maxAttempts(5).build();
    }

    /** The task definition on {@code queue}, as producers submit it: no handler code. */
    static Task<Job, Void> job(String queue) {
        return Task.builder(TASK, Job.class).queue(queue).maxAttempts(5).build();
    }

    /** The task on the ledger's queue (the ledger is named after the queue), bound to the handler a worker runs. */
    static TaskBinding<Job, Void> binding(Ledger ledger) {
        return bind(job(ledger.name()), ledger);
    }

    private static TaskBinding<Job, Void> bind(Task<Job, Void> task, Ledger ledger) {
        return task.handledBy(job -> {
            ledger.started(job.n());
            Thread.sleep(job.sleepMillis());
            ledger.done(job.n());
            return null;
        });
    }
}
