package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A submit, a batch's (built and submitted) and a workflow's, of several jobs on queues whose
 * partitions the client has not read yet (a batch's callback on another one), blocks at most twice the command timeout on a stopped or
 * a frozen Redis, as configuration.md promises: one for the read of the queue's partitions, one for
 * the write. Not a speed bound: what must never happen is a read per job or per queue, each
 * waiting its timeout.
 */
class SubmitBoundIT {
    /**
     * Longer than the partitions' refresh period (1 s): a failed read then counted from its start
     * was stale already when it failed, and the next job of the same submit read them again.
     */
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(1500);
    /** What a loaded machine may add to the two timeouts (threads, timers ticking every 10-100 ms). */
    private static final long MARGIN_MILLIS = 500;
    private static final int JOBS = 3;

    enum Kind { SUBMIT, BATCH, WORKFLOW }

    @ParameterizedTest(name = "{0} with Redis {1}")
    @CsvSource({"SUBMIT, stopped", "BATCH, stopped", "WORKFLOW, stopped", "SUBMIT, frozen", "BATCH, frozen", "WORKFLOW, frozen"})
    void aSubmitBlocksAtMostTwiceTheCommandTimeout(Kind kind, String outage) {
        String queue = "bound-" + kind.name().toLowerCase() + "-" + UUID.randomUUID().toString().substring(0, 8);
        Task<String, Void> task = Task.builder("bound-job", String.class).queue(queue).build();
        try (RedisServer redis = RedisServer.startNew(); Binomic client = client(redis)) {
            // connected, scripts loaded: what follows is the submit alone
            client.submit(Task.builder("warm", String.class).queue(queue + "-warm").build(), "warm");
            boolean frozen = outage.equals("frozen");
            if (frozen) {
                redis.freeze();
            } else {
                redis.stop();
            }
            long start = System.nanoTime();
            Throwable failure = null;
            try {
                submit(client, kind, task, Task.builder("bound-other", String.class).queue(queue + "-other").build());
            } catch (RuntimeException e) {
                failure = e;
            } finally {
                if (frozen) {
                    redis.thaw();
                }
            }
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            long bound = 2 * COMMAND_TIMEOUT.toMillis() + MARGIN_MILLIS;
            assertTrue(tookMillis <= bound, kind + " with Redis " + outage + " blocked " + tookMillis + " ms, more than 2 x "
                    + COMMAND_TIMEOUT.toMillis() + " ms + " + MARGIN_MILLIS + " ms; it " + (failure == null ? "returned"
                    : "threw " + failure));
        }
    }

    /** Submits one job of {@code task}, or a batch or a workflow of {@value #JOBS} jobs on the queues of {@code task} and {@code other}. */
    private static void submit(Binomic client, Kind kind, Task<String, Void> task, Task<String, Void> other) {
        switch (kind) {
            case SUBMIT -> client.submit(task, "job");
            case BATCH -> {
                var batch = client.batch();
                for (int i = 0; i < JOBS; i++) {
                    batch.add(i == 0 ? other : task, "job #" + i);
                }
                batch.onSuccess(Task.builder("bound-callback", String.class).queue(task.queue() + "-callback").build(), "done");
                batch.submit();
            }
            case WORKFLOW -> {
                var workflow = Workflow.builder();
                for (int i = 0; i < JOBS; i++) {
                    workflow.add("n" + i, i == 0 ? other : task, "job #" + i);
                }
                client.submit(workflow.build());
            }
        }
    }

    private static Binomic client(RedisServer redis) {
        return Binomic.builder().config(BinomicConfig.builder().broker(BrokerConfig.builder().url(redis.url())
                .commandTimeout(COMMAND_TIMEOUT).build()).schedulePeriodicTasks(false).build()).build().start();
    }
}
