package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.Binomic;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the CLI's writes say they did: a resume that changed nothing, a dead-letter filter that names no task of the queue
 * or matched nothing, a job held by a pause, a write to a broker no worker of the queue reads. Found by an outside tester
 * (oi20 F2-F5); each used to say it worked, or nothing, with exit 0.
 */
class BinomicCliSaysWhatChangedTest {
    private static final String BROKER = "broker redis://ada:****@other-host:6380/3";
    private static final Map<String, String> ENV = Map.of("BINOMIC_BROKER_URL", "redis://ada:s3cret@other-host:6380/3");
    private static final Instant FAILED_AT = Instant.parse("2026-11-30T01:02:03Z");

    private final MemoryBroker broker = new MemoryBroker(BrokerConfig.defaults());
    private final MemoryScheduler scheduler = new MemoryScheduler(broker);
    private final Broker survivesClose = (Broker) Proxy.newProxyInstance(Broker.class.getClassLoader(),
            new Class<?>[] {Broker.class}, (proxy, method, args) -> {
                if (method.getName().equals("close")) {
                    return null;
                }
                try {
                    return method.invoke(broker, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
    private final Task<String, String> greet = Task.builder("greet", String.class, String.class).queue("mail").build();

    @AfterEach
    void closeBroker() {
        broker.close();
    }

    /** A CLI with task greet of queue mail on its module path, on the URL it was given (the memory broker all the same). */
    private Binomic connect(String url, List<String> queues) {
        return Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl(url).worker(WorkerConfig.builder().queues(queues).build())
                        .schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(greet, s -> s).build().start();
    }

    private CliRun run(String... args) {
        return CliRun.of(ENV, this::connect, args);
    }

    /** What a worker leaves of a queue it read: its consumer group. */
    private void read(String queue) {
        broker.reclaim(queue, "worker-1", Duration.ofMinutes(1), 1);
    }

    private void deadLetter(String queue, String task, int n) throws Exception {
        broker.start(List.of(queue));
        for (int i = 0; i < n; i++) {
            broker.enqueue(Message.fromWire(UUID.randomUUID(), task, queue, 1, FAILED_AT, "{}".getBytes(StandardCharsets.UTF_8), Map.of()));
        }
        List<Delivery> deliveries = broker.fetch(List.of(queue), "test-consumer", n, Duration.ZERO);
        for (Delivery d : deliveries) {
            broker.settle("test-consumer", List.of(new Settlement.DeadLetter(d,
                    new DeadLetter.Failure(DeadLetterReason.MAX_ATTEMPTS, "java.io.IOException", "boom", "", 3, FAILED_AT))));
        }
    }

    /** F3: a resume of what is not paused said "resumed" with exit 0, whichever of queue and task was paused. */
    @Test
    void aResumeOfAQueueOrTaskNotPausedSaysNothingChangedAndWhatIsPaused() {
        read("mail");
        CliRun queue = run("queue", "resume", "mail");
        assertEquals(1, queue.exit(), queue.toString());
        assertEquals("", queue.out());
        assertEquals("binomic queue resume: queue mail was not paused on " + BROKER + "; nothing changed\n", queue.err());

        assertEquals(0, run("queue", "pause", "mail", "--task", "greet").exit());
        CliRun taskPaused = run("queue", "resume", "mail");
        assertEquals(1, taskPaused.exit(), taskPaused.toString());
        assertEquals("binomic queue resume: queue mail was not paused on " + BROKER + "; nothing changed: its task greet is paused one"
                + " by one; resume it with 'binomic queue resume mail --task greet'\n", taskPaused.err());

        CliRun resumed = run("queue", "resume", "mail", "--task", "greet");
        assertEquals(0, resumed.exit(), resumed.toString());
        assertEquals("resumed queue mail task greet on " + BROKER + "\n", resumed.out());
        assertEquals("", resumed.err());

        CliRun again = run("queue", "resume", "mail", "--task", "greet");
        assertEquals(1, again.exit(), again.toString());
        assertEquals("", again.out());
        assertEquals("binomic queue resume: task greet of queue mail was not paused on " + BROKER + "; nothing changed\n", again.err());

        assertEquals(0, run("queue", "pause", "mail").exit());
        CliRun queuePaused = run("queue", "resume", "mail", "--task", "greet");
        assertEquals(1, queuePaused.exit(), queuePaused.toString());
        assertEquals("binomic queue resume: task greet of queue mail was not paused on " + BROKER + "; nothing changed: the whole queue"
                + " mail is paused; resume it with 'binomic queue resume mail'\n", queuePaused.err());
        assertTrue(CliRun.of(ENV, this::connect, "queues", "--queues", "mail").out().contains(" yes "), "still paused");
    }

    /** F4: a mistyped --task of a replay or purge replayed or purged nothing, and said so with exit 0. */
    @Test
    void aDlqTaskFilterIsCheckedAsATaskNameIs() throws Exception {
        deadLetter("emails", "send", 2);
        for (String verb : List.of("list", "replay", "purge")) {
            CliRun refused = run("dlq", verb, "--queues", "emails", "--task", "sned");
            assertEquals(2, refused.exit(), refused.toString());
            assertEquals("", refused.out(), refused.toString());
            assertTrue(refused.err().startsWith("binomic dlq " + verb + ": task 'sned' is not known: no task on the module path has that"
                    + " name and no dead letter of queue emails is of it; did you mean 'send'? Else add --any-task to use the name as"
                    + " typed\n"), refused.err());
        }
        CliRun otherQueue = run("dlq", "purge", "--queues", "emails", "--task", "greet");
        assertEquals(2, otherQueue.exit(), otherQueue.toString());
        assertTrue(otherQueue.err().startsWith("binomic dlq purge: task 'greet' is not a task of queue emails: the task of that name on the"
                + " module path is declared on queue 'mail', and no dead letter of queue emails is of it; did you mean --queues mail?"
                + " Else add --any-task to use the name as typed\n"), otherQueue.err());
        CliRun far = run("dlq", "replay", "--queues", "emails", "--task", "zzzzzz");
        assertEquals(2, far.exit(), "the CLI knows the application's tasks: " + far);
        assertEquals(2, broker.stats("emails").deadLetters(), "nothing replayed or purged");

        CliRun replayed = run("dlq", "replay", "--queues", "emails", "--task", "send");
        assertEquals(0, replayed.exit(), replayed.toString());
        assertEquals("replayed 2 dead letter(s) of queue emails\n", replayed.out());
    }

    /** F4: "nothing matched" exits 1, as every other write that changed nothing does. */
    @Test
    void aReplayOrPurgeThatMatchedNothingExitsOneNamingTheBroker() throws Exception {
        deadLetter("emails", "send", 1);
        CliRun asTyped = run("dlq", "replay", "--queues", "emails", "--task", "sned", "--any-task");
        assertEquals(1, asTyped.exit(), asTyped.toString());
        assertEquals("replayed 0 dead letter(s) of queue emails\n", asTyped.out());
        assertEquals("binomic dlq replay: nothing matched in queue emails on " + BROKER + "; nothing changed\n", asTyped.err());

        CliRun reason = run("dlq", "purge", "--queues", "emails", "--reason", "non_retryable");
        assertEquals(1, reason.exit(), reason.toString());
        CliRun none = run("dlq", "replay", "--queues", "mail", "--task", "greet");
        assertEquals(1, none.exit(), "a known task with no dead letter is no usage error: " + none);
        assertEquals(1, broker.stats("emails").deadLetters());

        CliRun all = run("dlq", "purge", "--queues", "emails", "--all");
        assertEquals(0, all.exit(), all.toString());
        CliRun empty = run("dlq", "purge", "--queues", "emails", "--all");
        assertEquals(0, empty.exit(), "an empty dead-letter queue is what a purge of all wants: " + empty);
        assertEquals("binomic dlq purge: no dead letters in queue emails on " + BROKER + "; nothing to do\n", empty.err());
    }

    /** F2: a job held by a pause was said to be QUEUED, with no word of the pause. */
    @Test
    void aJobHeldByAPauseSaysSoOnSubmitWaitAndShow() {
        read("mail");
        assertEquals(0, run("queue", "pause", "mail").exit());
        CliRun waited = run("job", "submit", "--task", "greet", "--json", "\"x\"", "--wait", "200ms");
        assertEquals(1, waited.exit(), waited.toString());
        String id = waited.out().strip();
        String held = "queue 'mail' is paused: the job starts once it is resumed ('binomic queue resume mail')";
        assertEquals("binomic job submit: warning: " + held + "\njob " + id + " did not end within PT0.2S; it is QUEUED (it goes on: wait"
                + " again, or cancel it); " + held + "\n", waited.err());
        CliRun show = run("job", "show", id);
        assertTrue(show.out().contains("state    QUEUED\npaused   " + held + "\n"), show.out());

        assertEquals(0, run("queue", "resume", "mail").exit());
        assertEquals(0, run("queue", "pause", "mail", "--task", "greet").exit());
        CliRun task = run("job", "submit", "--task", "greet", "--json", "\"y\"");
        assertEquals(0, task.exit(), task.toString());
        assertEquals("binomic job submit: warning: task 'greet' of queue 'mail' is paused: the job starts once it is resumed"
                + " ('binomic queue resume mail --task greet')\n", task.err());
        assertTrue(run("job", "show", id).out().contains("\npaused   task 'greet' of queue 'mail' is paused"), "the first job too");

        assertEquals(0, run("queue", "resume", "mail", "--task", "greet").exit());
        assertFalse(run("job", "show", id).out().contains("paused"), "nothing paused: no word of it");
    }

    /** F5: a pause written to a database no worker reads said "paused queue alpha", as on the right one. */
    @Test
    void aWriteNamesTheBrokerAndWarnsOfAQueueNoWorkerReadThere() {
        String never = "binomic queue pause: warning: no worker has read queue 'mail' on " + BROKER + " (it has no consumer group"
                + " there): workers that run it use another broker, database or key prefix, or none has started yet; check --broker"
                + " (BINOMIC_BROKER_URL, broker.url)\n";
        CliRun pause = run("queue", "pause", "mail");
        assertEquals(0, pause.exit(), pause.toString());
        assertEquals("paused queue mail on " + BROKER + "\n", pause.out());
        assertEquals(never, pause.err());
        assertFalse(pause.toString().contains("s3cret"));
        CliRun limit = run("queue", "limit", "mail", "--concurrency", "2");
        assertEquals("limits of queue mail on " + BROKER + ": concurrency 2\n", limit.out());
        assertEquals(never.replace("queue pause", "queue limit"), limit.err());

        read("mail");
        CliRun resume = run("queue", "resume", "mail");
        assertEquals(0, resume.exit(), resume.toString());
        assertEquals("resumed queue mail on " + BROKER + "\n", resume.out());
        assertEquals("", resume.err(), "a queue a worker read there");
    }
}
