package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.it.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code binomic job submit|show|cancel} against a worker on real Redis, as an operator types them. */
class JobCliOnRedisTest {
    record Greeting(String name) { }

    private final RedisServer redis = RedisServer.shared();
    private final String queue = "jobcli-" + UUID.randomUUID().toString().substring(0, 8);
    private final Task<Greeting, String> greet = Task.builder("greet", Greeting.class, String.class).queue(queue).build();
    private final Task<Greeting, String> slow = Task.builder("slow", Greeting.class, String.class).queue(queue).build();
    private final CountDownLatch slowStarted = new CountDownLatch(1);
    private Binomic worker;

    private static CliRun cli(String... args) {
        return CliRun.of(args);
    }

    @BeforeEach
    void startWorker() {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).build()).build();
        worker = Binomic.builder().config(config)
                .handle(greet, g -> "Hello, " + g.name() + "!")
                .handle(slow, g -> {
                    slowStarted.countDown();
                    Thread.sleep(60_000);
                    return "late";
                })
                .build().start();
        worker.startWorker();
        // The CLI refuses a queue the broker knows nothing of; a started worker is known once its
        // first call has registered it as a consumer, a round trip or two after startWorker returns.
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (worker.queueStats(queue).consumers() == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the worker never showed as a consumer of " + queue);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
        }
    }

    @AfterEach
    void stopWorker() {
        worker.close();
    }

    @Test
    void submitByNameWaitsForTheResultAndShowPrintsTheJob() {
        CliRun submitted = cli("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue,
                "--json", "{\"name\":\"Ada\"}", "--wait", "20s");

        assertEquals(0, submitted.exit(), submitted.toString());
        String[] lines = submitted.out().split("\n");
        UUID id = UUID.fromString(lines[0]);
        assertEquals("SUCCEEDED \"Hello, Ada!\"", lines[1]);

        CliRun shown = cli("job", "show", id.toString(), "--broker", redis.url(), "--queue", queue); // the id as the first word
        assertEquals(0, shown.exit(), shown.toString());
        assertTrue(shown.out().contains("state    SUCCEEDED\n"), shown.out());
        assertTrue(shown.out().contains("task     greet\n"), shown.out());
        assertTrue(shown.out().contains("result   \"Hello, Ada!\"\n"), shown.out());
        assertTrue(shown.out().contains("ATTEMPT  WORKER"), shown.out());
        assertTrue(shown.out().lines().anyMatch(l -> l.strip().startsWith("1 ") && l.contains("succeeded")), shown.out());
    }

    @Test
    void anArgumentThatDoesNotFitIsDeadLetteredByTheWorkerAndTextThatIsNotJsonIsRefusedAtOnce() {
        CliRun misfit = cli("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue,
                "--json", "{\"nom\":\"Ada\"}", "--wait", "20s");
        assertEquals(1, misfit.exit(), misfit.toString());
        assertTrue(misfit.out().contains("DEAD_LETTERED"), misfit.toString());
        assertTrue(misfit.err().contains("DECODE_ERROR"), misfit.toString());

        CliRun notJson = cli("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue, "--json", "{name: Ada");
        assertEquals(2, notJson.exit(), notJson.toString());
        assertTrue(notJson.err().contains("not JSON"), notJson.toString());
    }

    @Test
    void cancelInterruptsARunningJobAndSaysWhatItDid() throws Exception {
        JobHandle<String> job = worker.submit(slow, new Greeting("Bob"));
        assertTrue(slowStarted.await(20, TimeUnit.SECONDS));

        CliRun cancel = cli("job", "cancel", "--broker", redis.url(), "--id", job.id().toString(), "--queue", queue);
        assertEquals(0, cancel.exit(), cancel.toString());
        assertEquals("CANCEL_REQUESTED " + job.id() + "\n", cancel.out());

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (job.status().state() != JobState.CANCELLED && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(JobState.CANCELLED, job.status().state());
        CliRun again = cli("job", "cancel", "--broker", redis.url(), "--id", job.id().toString(), "--queue", queue);
        assertEquals(1, again.exit(), again.toString());
        assertEquals("ALREADY_ENDED " + job.id() + "\n", again.out());
    }

    @Test
    void anUnknownJobIsSaidSoAndABadIdIsBadUsage() {
        UUID unknown = UUID.randomUUID();
        CliRun show = cli("job", "show", "--broker", redis.url(), "--id", unknown.toString(), "--queue", queue);
        assertEquals(1, show.exit(), show.toString());
        assertTrue(show.err().contains("no status is kept for job " + unknown), show.toString());

        CliRun cancel = cli("job", "cancel", "--broker", redis.url(), "--id", unknown.toString(), "--queue", queue);
        assertEquals(1, cancel.exit(), cancel.toString());
        assertEquals("NOT_FOUND " + unknown + "\n", cancel.out());

        CliRun bad = cli("job", "show", "--broker", redis.url(), "--id", "not-a-uuid", "--queue", queue);
        assertEquals(2, bad.exit(), bad.toString());
        assertTrue(bad.err().contains("is not a job id"), bad.toString());
    }

    /** A mistyped queue is refused with the name meant, writes nothing, and the real queue runs on; --create means a new one. */
    @Test
    void aWriteToAQueueNothingKnowsIsRefusedAndCreateMeansIt() throws Exception {
        Path config = Files.createTempFile("binomic", ".conf");
        try {
            Files.writeString(config, "worker.queues = " + queue + "\n");
            String typo = queue.substring(0, queue.length() - 1) + (queue.endsWith("x") ? "y" : "x");
            CliRun pause = cli("queue", "pause", typo, "--broker", redis.url(), "--config", config.toString());
            assertEquals(2, pause.exit(), pause.toString());
            assertTrue(pause.err().startsWith("binomic queue pause: queue '" + typo + "' is not known")
                    && pause.err().contains("did you mean '" + queue + "'?"), pause.toString());
            assertEquals(List.of(), redis.call("KEYS", "binomic:{" + typo + "}*"), "nothing of the mistyped queue written");
        } finally {
            Files.delete(config);
        }
        CliRun known = cli("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", queue,
                "--json", "{\"name\":\"Ada\"}", "--wait", "20s");
        assertEquals(0, known.exit(), known.toString());

        String fresh = "jobcli-new-" + UUID.randomUUID().toString().substring(0, 8);
        CliRun refused = cli("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", fresh, "--json", "{}");
        assertEquals(2, refused.exit(), refused.toString());
        assertTrue(refused.err().contains("queue '" + fresh + "' is not known"), refused.toString());
        assertEquals(0L, redis.call("EXISTS", "binomic:{" + fresh + "}:stream"));
        CliRun created = cli("job", "submit", "--broker", redis.url(), "--task", "greet", "--queue", fresh, "--json", "{}", "--create");
        assertEquals(0, created.exit(), created.toString());
        assertEquals(1L, redis.call("XLEN", "binomic:{" + fresh + "}:stream"));
    }

    /** Redis at maxmemory under noeviction: one line that says so and what became of the job, not the script and its buffers. */
    @Test
    void aSubmitWhileRedisIsOutOfMemoryPrintsOneLineAndExits1() {
        try (RedisServer full = RedisServer.startNew()) {
            full.call("CONFIG", "SET", "maxmemory", "1");
            CliRun submitted = cli("job", "submit", "--broker", full.url(), "--task", "greet", "--queue", queue,
                    "--json", "{\"name\":\"Ada\"}", "--create");

            assertEquals(1, submitted.exit(), submitted.toString());
            String err = submitted.err().strip();
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.startsWith("binomic job submit: Redis at 127.0.0.1:" + full.port() + " is out of memory (maxmemory reached, OOM)")
                    && err.contains("the job was not enqueued") && !err.contains("redis.call"), err);
        }
    }
}
