package io.binomic.it.process;

import io.binomic.api.Task;
import io.binomic.api.spi.TaskProvider;
import java.util.List;

/**
 * The application that worker JVMs started by the master run in these tests, found through
 * {@code META-INF/services} like any application's tasks. Its one task records every execution
 * in a {@link Ledger} named by the system property {@value #LEDGER_PROPERTY} (the tests pass it
 * with the master's worker JVM options); without the property it declares nothing, so other
 * tests that discover tasks are not affected.
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
    public List<Task<?, ?>> tasks() {
        String spec = System.getProperty(LEDGER_PROPERTY);
        return spec == null ? List.of() : List.of(job(Ledger.parse(spec)));
    }

    /** The task on the ledger's queue (the ledger is named after the queue). */
    static Task<Job, Void> job(Ledger ledger) {
        return Task.<Job, Void>builder(TASK, Job.class, job -> {
            ledger.started(job.n());
            Thread.sleep(job.sleepMillis());
            ledger.done(job.n());
            return null;
        }).queue(ledger.name()).maxAttempts(5).build();
    }
}
