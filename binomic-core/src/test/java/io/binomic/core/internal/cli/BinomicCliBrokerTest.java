package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import io.binomic.core.Binomic;
import io.binomic.core.BrokerCapabilities;
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
 * The broker commands against an embedded broker that outlives each CLI run (the CLI closes
 * what it connects; the broker here ignores that). The same commands against Redis are in binomic-it.
 */
class BinomicCliBrokerTest {
    private static final String UNCHECKED_SEND = "binomic job submit: warning: task name 'send' not checked: this CLI has no task on its module path (put the application's"
                + " task module beside it, in runtime/app/ or on --module-path, to check names); a worker with no handler of that name"
                + " dead-letters the job as TASK_NOT_FOUND; --any-task means the name as typed, without this warning\n";

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

    @AfterEach
    void closeBroker() {
        broker.close();
    }

    private Binomic connect(String url, List<String> queues) {
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build())
                .schedulePeriodicTasks(false).build();
        return Binomic.builder().config(config).broker(survivesClose).scheduler(scheduler).build().start();
    }

    private CliRun run(String... args) {
        return CliRun.of(Map.of(), this::connect, args);
    }

    private static Message message(String queue, String task) {
        return Message.fromWire(UUID.randomUUID(), task, queue, 1, FAILED_AT, "{}".getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private void enqueue(String queue, String task, int n) {
        for (int i = 0; i < n; i++) {
            broker.enqueue(message(queue, task));
        }
    }

    private void deadLetter(String queue, String task, int n, DeadLetterReason reason, String errorClass) throws Exception {
        broker.start(List.of(queue));
        enqueue(queue, task, n);
        List<Delivery> deliveries = broker.fetch(List.of(queue), "test-consumer", n, Duration.ZERO);
        assertEquals(n, deliveries.size());
        for (Delivery d : deliveries) {
            broker.settle("test-consumer", List.of(new Settlement.DeadLetter(d,
                    new DeadLetter.Failure(reason, errorClass, "boom\nsecond line", "", 3, FAILED_AT))));
        }
    }

    @Test
    void queuesShowsEveryCountOfEveryQueue() throws Exception {
        broker.start(List.of("emails", "reports"));
        enqueue("emails", "send", 5);
        broker.fetch(List.of("emails"), "c1", 2, Duration.ZERO);
        scheduler.schedule(message("reports", "render"), Instant.now().plusSeconds(3600));
        deadLetter("reports", "render", 1, DeadLetterReason.MAX_ATTEMPTS, "java.io.IOException");
        assertEquals(0, run("queue", "limit", "reports", "--concurrency", "3").exit());

        CliRun run = run("queues", "--queues", "emails,reports");

        assertEquals(0, run.exit(), run.toString());
        assertEquals("""
                QUEUE    READY  PENDING  DELAYED  PARKED  DEAD  CONSUMERS  PAUSED  LIMITS
                emails       3        2        0       0     0          1  -       -
                reports      0        0        1       0     1          1  -       concurrency 3
                """, run.out());
        assertEquals(0, run("queue", "pause", "reports").exit());
        assertEquals("""
                QUEUE    READY  PENDING  DELAYED  PARKED  DEAD  CONSUMERS  PAUSED  LIMITS
                emails       3        2        0       0     0          1  -       -
                reports      0        0        1       0     1          1  yes     concurrency 3
                """, run("queues", "--queues", "emails,reports").out(), "a paused queue moves no column");
    }

    /**
     * Found by an outside tester: the jobs of a paused task that a worker had fetched, parked until the resume, were
     * counted as DELAYED, as if a due time would bring them back.
     */
    @Test
    void queuesShowsTheJobsAPauseHoldsAsParkedNotDelayed() throws Exception {
        broker.start(List.of("emails"));
        enqueue("emails", "send", 3);
        enqueue("emails", "bounce", 1);
        scheduler.schedule(message("emails", "send"), Instant.now().plusSeconds(3600));
        assertEquals(0, run("queue", "pause", "emails", "--task", "send", "--any-task").exit());
        // What a worker does with the messages of a paused task it fetched: parks them, no attempt used.
        for (Delivery d : broker.fetch(List.of("emails"), "c1", 4, Duration.ZERO)) {
            if (d.message().orElseThrow().task().equals("send")) {
                broker.settle("c1", List.of(new Settlement.RetryLater(d, d.message().orElseThrow(), PauseState.PARKED_UNTIL)));
            }
        }

        assertEquals("""
                QUEUE   READY  PENDING  DELAYED  PARKED  DEAD  CONSUMERS  PAUSED     LIMITS
                emails      0        1        1       3     0          1  task:send  -
                """, run("queues", "--queues", "emails").out());

        assertEquals(0, run("queue", "resume", "emails", "--task", "send").exit());
        assertEquals("""
                QUEUE   READY  PENDING  DELAYED  PARKED  DEAD  CONSUMERS  PAUSED  LIMITS
                emails      0        1        4       0     0          1  -       -
                """, run("queues", "--queues", "emails").out(), "the resume made them due now: the next move of due jobs readies them");
    }

    @Test
    void queuePartitionsSetsShowsAndLowersAndTheOtherCommandsNameTheQueueItself() throws Exception {
        assertEquals("partitions of queue clicks: 1\n", run("queue", "partitions", "clicks").out());
        CliRun set = run("queue", "partitions", "clicks", "3", "--create");
        assertEquals(0, set.exit(), set.toString());
        assertEquals("partitions of queue clicks: 3\n", set.out());
        assertEquals("partitions of queue clicks: 3\n", run("queue", "partitions", "clicks").out());
        enqueue("clicks", "track", 2);
        enqueue("clicks@2", "track", 4);
        deadLetter("clicks@1", "track", 1, DeadLetterReason.MAX_ATTEMPTS, "java.io.IOException");

        assertEquals("""
                QUEUE   READY  PENDING  DELAYED  PARKED  DEAD  CONSUMERS  PAUSED  LIMITS
                clicks      6        0        0       0     1          1  -       -
                """, run("queues", "--queues", "clicks").out(), "the sums over the partitions");
        String details = run("dlq", "list", "--queues", "clicks", "--details").out();
        String id = BrokerCapabilities.deadLetterStore(broker).readDeadLetters("clicks@1", java.util.Optional.empty(), 1).getFirst().id() + "@1";
        assertTrue(details.contains(id), details);
        CliRun replay = run("dlq", "replay", "--queues", "clicks", "--id", id);
        assertEquals(0, replay.exit(), replay.toString());
        assertEquals(1, broker.stats("clicks@1").ready(), "back on its partition");

        assertEquals("partitions of queue clicks: 2 (workers still drain partition 2: run 'binomic queue partitions clicks 2' again once it"
                + " holds no ready, pending or delayed job and no dead letter (purge those with binomic dlq purge; a replay puts them back"
                + " on the same partition))\n", run("queue", "partitions", "clicks", "--count", "2").out());
        CliRun limit = run("queue", "limit", "clicks", "--concurrency", "2");
        assertEquals(2, limit.exit(), limit.toString());
        assertTrue(limit.err().startsWith("binomic queue limit: queue 'clicks' is partitioned"), limit.err());
        // Found by an outside tester: the queue's state is what to fix, and the message says how; the command's help would not.
        assertEquals(1, limit.err().lines().count(), "one line, no pointer to --help: " + limit.err());
    }

    @Test
    void aWriteToAQueueNothingKnowsIsRefusedWithTheClosestNameAndCreateMeansIt() {
        Map<String, String> env = Map.of("BINOMIC_WORKER_QUEUES", "nc-main");
        for (String[] write : new String[][] {{"queue", "pause", "nc-mian"}, {"queue", "resume", "nc-mian"},
                {"queue", "limit", "nc-mian", "--concurrency", "2"}, {"queue", "partitions", "nc-mian", "2"},
                {"job", "submit", "--task", "send", "--queue", "nc-mian", "--json", "{}"}}) {
            CliRun refused = CliRun.of(env, this::connect, write);
            assertEquals(2, refused.exit(), refused.toString());
            assertTrue(refused.err().startsWith("binomic " + write[0] + " " + write[1] + ": queue 'nc-mian' is not known: no task on"
                    + " the module path or worker.queues setting names it, and the broker holds no job, consumer group, dead letter, pause,"
                    + " limit or recent activity of it; did you mean 'nc-main'? Else add --create for a new queue\n"), refused.err());
        }
        assertEquals(new QueueStats("nc-mian", 0, 0, 0, 0, 0), broker.stats("nc-mian"), "nothing written");
        assertEquals(PauseState.NONE, broker.capability(Pausing.class).orElseThrow().pauseStates(List.of("nc-mian")).getOrDefault("nc-mian",
                PauseState.NONE));

        assertEquals("paused queue nc-main on broker memory://\n", CliRun.of(env, this::connect, "queue", "pause", "nc-main").out(), "named by worker.queues");
        CliRun created = run("queue", "pause", "nc-mian", "--create");
        assertEquals(0, created.exit(), created.toString());
        assertEquals("paused queue nc-mian on broker memory://\n", created.out());
        assertEquals("resumed queue nc-mian on broker memory://\n", run("queue", "resume", "nc-mian").out(), "known once paused");
    }

    /** A CLI without the application's modules or worker.queues knows no queue but those the broker holds. */
    @Test
    void aWriteToAQueueNothingKnowsNamesTheClosestQueueTheBrokerHolds() {
        enqueue("nc-main", "send", 1);

        CliRun refused = run("queue", "pause", "nc-mian");

        assertEquals(2, refused.exit(), refused.toString());
        assertTrue(refused.err().startsWith("binomic queue pause: queue 'nc-mian' is not known: no task on the module path or"
                + " worker.queues setting names it, and the broker holds no job, consumer group, dead letter, pause, limit or recent"
                + " activity of it; did you mean 'nc-main'? Else add --create for a new queue\n"), refused.err());
    }

    /**
     * Found by an outside tester: the JDK's UUID parser pads short groups with zeros, so a mistyped
     * or truncated id named another id, and a cancel acted on an id nobody typed.
     */
    @Test
    void aMalformedIdIsRefusedNotReadAsAnotherId() {
        String dropped = "01a243da-3690-7149-acb9-4be90c2dee9"; // one digit of the last group dropped
        for (String[] args : List.of(
                new String[] {"batch", "cancel", "--id", "1-2-3-4-5"},
                new String[] {"batch", "show", "--id", dropped},
                new String[] {"batch", "show", "1a243da-3690-7149-acb9-04be90c2dee9"},
                new String[] {"workflow", "cancel", "--id", "1-2-3-4-5"},
                new String[] {"workflow", "show", dropped},
                new String[] {"job", "cancel", "--id", "1-2-3-4-5", "--queue", "nc-main"},
                new String[] {"job", "show", dropped, "--queue", "nc-main"},
                new String[] {"batch", "show", "01a243da-3690-7149-acb9-04be90c2dee9a"},
                new String[] {"batch", "show", "01a243da+3690-7149-acb9-04be90c2dee9"})) {
            CliRun refused = run(args);
            String noun = args[0];
            String id = args[2].equals("--id") ? args[3] : args[2];
            assertEquals(2, refused.exit(), refused.toString());
            assertTrue(refused.err().startsWith("binomic " + noun + " " + args[1] + ": --id: '" + id + "' is not a " + noun
                    + " id (36 characters, 8-4-4-4-12 hex digits, such as 0193a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d)\n"), refused.err());
            assertEquals("", refused.out(), "nothing looked up or cancelled");
        }
        CliRun upper = run("batch", "show", "01A243DA-3690-7149-ACB9-04BE90C2DEE9");
        assertEquals(1, upper.exit(), "upper-case hex is the same id: looked up, not found " + upper);
        assertTrue(upper.err().contains("no batch 01a243da-3690-7149-acb9-04be90c2dee9"), upper.err());
    }

    /** Found by an outside tester: a job not found on a mistyped queue, or on none given, named a queue it had not looked on alone. */
    @Test
    void aJobNotFoundSaysWhereItWasLookedFor() {
        enqueue("nc-main", "send", 1);
        String unknown = UUID.randomUUID().toString();

        CliRun typo = run("job", "show", unknown, "--queue", "nc-mian");
        assertEquals(1, typo.exit(), typo.toString());
        assertTrue(typo.err().startsWith("no status is kept for job " + unknown + " on queue nc-mian of broker memory:// (queue 'nc-mian'"
                + " is not known:"),
                typo.err());
        assertTrue(typo.err().contains("did you mean 'nc-main'?"), typo.err());

        Task<String, Void> greet = Task.builder("greet", String.class).queue("mail").build();
        Task<String, Void> post = Task.builder("post", String.class).queue("letters").build();
        BinomicCli.Connector withTasks = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(greet, s -> null).handle(post, s -> null).build().start();
        CliRun anywhere = CliRun.of(Map.of(), withTasks, "job", "show", unknown);
        assertEquals(1, anywhere.exit(), anywhere.toString());
        assertTrue(anywhere.err().startsWith("no status is kept for job " + unknown + " on any queue of the tasks on the module path"
                + " (letters, mail) of broker memory://: "), anywhere.err());
        assertEquals("job      " + unknown + "\nstate    UNKNOWN\n", anywhere.out(), "no queue the job is not known to be on");
        CliRun cancelAnywhere = CliRun.of(Map.of(), withTasks, "job", "cancel", unknown);
        assertEquals(1, cancelAnywhere.exit(), cancelAnywhere.toString());
        assertEquals("binomic job cancel: no job " + unknown + " on any queue of the tasks on the module path (letters, mail) of broker"
                + " memory://: a wrong id or queue, a task that is not tracked, or a status past its retention\n", cancelAnywhere.err());
    }

    /** A worker that stops cleanly leaves no consumer; the queue it read is still no typo. */
    @Test
    void aQueueOnlyAStoppedWorkerReadIsKnown() throws Exception {
        broker.fetch(List.of("left"), "gone", 1, Duration.ofMillis(10));
        assertTrue(broker.removeConsumer("left", "gone"));
        assertEquals(new QueueStats("left", 0, 0, 0, 0, 0), broker.stats("left"));

        CliRun pause = run("queue", "pause", "left");

        assertEquals(0, pause.exit(), pause.toString());
        assertEquals("paused queue left on broker memory://\n", pause.out());
    }

    /** Found by an outside tester: a refused --unique-ttl or --delay was named by its Java API (Uniqueness.whileQueuedOrRunning). */
    @Test
    void aSubmitValueTheLibraryRefusesIsNamedByItsFlag() {
        CliRun ttl = run("job", "submit", "--task", "send", "--queue", "q", "--json", "{}", "--create", "--unique", "k", "--unique-ttl", "0s");
        assertEquals(2, ttl.exit(), ttl.toString());
        assertTrue(ttl.err().startsWith("binomic job submit: --unique-ttl must be at least 1 ms, was 0s: give how long the key may be held"
                + " at most, such as 1h\n"), ttl.err());
        CliRun delay = run("job", "submit", "--task", "send", "--queue", "q", "--json", "{}", "--create", "--delay", "0s");
        assertEquals(2, delay.exit(), delay.toString());
        assertTrue(delay.err().startsWith("binomic job submit: --delay must be at least 1 ms, was 0s; leave the option out to keep the"
                + " task's delay (a DIRECT task has none)\n"), delay.err());
        assertEquals(0, broker.stats("q").ready(), "nothing submitted");
    }

    @Test
    void aSubmitToAQueueNoWorkerHasReadIsRefusedUnlessCreateSaysSo() {
        CliRun refused = run("job", "submit", "--task", "send", "--queue", "fresh", "--json", "{}");
        assertEquals(2, refused.exit(), refused.toString());
        assertTrue(refused.err().contains("queue 'fresh' is not known") && refused.err().contains("; check the name, or add --create"
                + " for a new queue"), refused.err());
        assertEquals(0, broker.stats("fresh").ready());

        broker.start(List.of("busy"));
        enqueue("busy", "send", 1);
        assertEquals(0, run("job", "submit", "--task", "send", "--queue", "busy", "--json", "{}").exit(), "a queue with jobs is known");
        CliRun created = run("job", "submit", "--task", "send", "--queue", "fresh", "--json", "{}", "--create");
        assertEquals(0, created.exit(), created.toString());
        assertEquals(1, broker.stats("fresh").ready());
    }

    /** Found by an outside tester: a mistyped queue read with no word showed an empty queue's zeros as if they were the real one's. */
    @Test
    void aReadOfAQueueNothingKnowsWarnsWithTheClosestName() {
        broker.start(List.of("mail"));
        enqueue("mail", "send", 1);
        CliRun typo = run("queues", "--queues", "mail,mial");
        assertEquals(0, typo.exit(), typo.toString());
        assertTrue(typo.out().contains("mial"), typo.out());
        assertTrue(typo.err().startsWith("binomic queues: warning: queue 'mial' is not known: no task on the module path or"
                + " worker.queues setting names it, and the broker holds no job, consumer group, dead letter, pause, limit or recent activity"
                + " of it"), typo.err());
        assertFalse(typo.err().contains("'mail' is not known"), "a queue with a job is known: " + typo.err());
        CliRun limits = run("queue", "limit", "mial");
        assertEquals(0, limits.exit(), limits.toString());
        assertTrue(limits.err().startsWith("binomic queue limit: warning: queue 'mial' is not known"), limits.err());
        assertEquals("", run("queue", "limit", "mail").err(), "a known queue: no warning");
    }

    /** Found by an outside tester: a job on a queue no worker reads was submitted with no word of it, as a batch is not. */
    @Test
    void aSubmitToAQueueNoWorkerReadsWarnsSoAndWaitingSaysItStillHasNone() {
        CliRun created = run("job", "submit", "--task", "send", "--queue", "fresh", "--json", "{}", "--create");
        assertEquals(0, created.exit(), created.toString());
        assertEquals(UNCHECKED_SEND + "binomic job submit: warning: no worker reads queue 'fresh' (it has no consumer): the job waits"
                + " there until a worker of that queue starts\n", created.err());

        CliRun waited = run("job", "submit", "--task", "send", "--queue", "fresh", "--json", "{}", "--wait", "200ms");
        assertEquals(1, waited.exit(), waited.toString());
        String id = waited.out().strip();
        assertEquals(UNCHECKED_SEND + "binomic job submit: warning: no worker reads queue 'fresh' (it has no consumer): the job waits"
                + " there until a worker of that queue starts\njob " + id + " did not end within PT0.2S; it is QUEUED (it goes on: wait again, or"
                + " cancel it); queue 'fresh' still has no consumer: no worker reads it, so the job runs only once a worker of that"
                + " queue starts\n", waited.err());

        broker.reclaim("fresh", "worker-1", Duration.ofMinutes(1), 1);
        CliRun read = run("job", "submit", "--task", "send", "--queue", "fresh", "--json", "{}");
        assertEquals(0, read.exit(), read.toString());
        assertEquals(UNCHECKED_SEND, read.err(), "a queue a worker reads: no warning of it");
    }

    /** A unique job an application submitted without tracking it (a task with no result type): it keeps no status. */
    private UUID submitUntrackedUnique(String queue, String key) {
        Message m = message(queue, "send").toBuilder().unique(new UniqueClaim(Uniqueness.Scope.WHILE_QUEUED_OR_RUNNING,
                Duration.ofHours(1), key)).build();
        return broker.capability(UniqueSubmits.class).orElseThrow().submitUnique(m, null);
    }

    /**
     * Found by an outside tester: a --wait submit merged into an untracked job printed the state UNKNOWN and a "no
     * status is kept" error, without saying the submit had merged into another job, nor that it could not be awaited.
     */
    @Test
    void aWaitedSubmitMergedIntoAnUntrackedJobSaysSoAndExitsOne() {
        broker.start(List.of("feeds"));
        UUID existing = submitUntrackedUnique("feeds", "feed-7");
        broker.reclaim("feeds", "worker-1", Duration.ofMinutes(1), 1);

        CliRun run = run("job", "submit", "--task", "send", "--queue", "feeds", "--json", "{}", "--unique", "feed-7", "--any-task",
                "--wait", "5s");

        assertEquals(1, run.exit(), run.toString());
        assertEquals(existing + "\nUNTRACKED\n", run.out());
        assertEquals("binomic job submit: merged into job " + existing + ", which holds unique key 'feed-7' (a duplicate of a unique"
                + " job is dropped): no new job was queued\n"
                + "binomic job submit: cannot wait for job " + existing + ": it keeps no status (the submit it was queued by did not"
                + " track it, or its status is past its retention), so its end and result cannot be read; it runs as queued. Exit"
                + " code 1: nothing was waited for\n", run.err());
        assertEquals(1, broker.stats("feeds").ready() + broker.stats("feeds").pending(), "nothing new queued");
    }

    /** A merged submit of a tracked job waits for that job, as a fresh one does; it says it merged, with or without --wait. */
    @Test
    void aSubmitMergedIntoATrackedJobSaysSoAndWaitsForIt() {
        broker.start(List.of("feeds"));
        broker.reclaim("feeds", "worker-1", Duration.ofMinutes(1), 1);
        CliRun first = run("job", "submit", "--task", "send", "--queue", "feeds", "--json", "{}", "--unique", "feed-7", "--any-task");
        assertEquals(0, first.exit(), first.toString());
        assertEquals("", first.err(), "a fresh submit merges into nothing");
        String id = first.out().strip();

        CliRun again = run("job", "submit", "--task", "send", "--queue", "feeds", "--json", "{}", "--unique", "feed-7", "--any-task");
        assertEquals(0, again.exit(), again.toString());
        assertEquals(id + "\n", again.out());
        assertEquals("binomic job submit: merged into job " + id + ", which holds unique key 'feed-7' (a duplicate of a unique job is"
                + " dropped): no new job was queued\n", again.err());

        CliRun waited = run("job", "submit", "--task", "send", "--queue", "feeds", "--json", "{}", "--unique", "feed-7", "--any-task",
                "--wait", "100ms");
        assertEquals(1, waited.exit(), waited.toString());
        assertTrue(waited.err().endsWith("job " + id + " did not end within PT0.1S; it is QUEUED (it goes on: wait again, or cancel"
                + " it)\n"), waited.err());
    }

    /** Found by an outside tester: --debounce on a task declared unique was refused as if the user had asked for both. */
    @Test
    void aDebounceOnATaskDeclaredUniqueSaysTheTaskDeclaresIt() {
        Task<String, Void> refresh = Task.builder("refresh", String.class).queue("feeds")
                .unique(Uniqueness.whileQueuedOrRunning(Duration.ofHours(1)), feed -> "feed-" + feed).build();
        BinomicCli.Connector withRefresh = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(refresh, s -> null).build().start();
        CliRun refused = CliRun.of(Map.of(), withRefresh, "job", "submit", "--task", "refresh", "--json", "\"7\"", "--delay", "1m",
                "--debounce", "feed-7");
        assertEquals(2, refused.exit(), refused.toString());
        assertTrue(refused.err().startsWith("binomic job submit: task 'refresh' is declared unique (Task.Builder.unique), so a debounce"
                + " key (--debounce) cannot apply to it: a duplicate of a unique job is dropped, one"
                + " of a debounced job replaces it; leave the debounce key out (the declared unique key then merges duplicates), give"
                + " the submit its own unique key instead (--unique), or submit to a task that is not"
                + " unique\n"), refused.err());
        assertEquals(0, broker.stats("feeds").ready() + broker.stats("feeds").delayed(), "nothing submitted");
    }

    /** The refusal of a unique key for a debounced task names the CLI's flag once, in the CLI's terms. */
    @Test
    void aUniqueKeyOnATaskDeclaredDebouncedNamesTheFlagOnce() {
        Task<String, Void> reindex = Task.builder("reindex", String.class).queue("search").delay(Duration.ofHours(1))
                .debounce(user -> "user-" + user).build();
        BinomicCli.Connector withReindex = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(reindex, s -> null).build().start();
        CliRun refused = CliRun.of(Map.of(), withReindex, "job", "submit", "--task", "reindex", "--json", "\"7\"", "--unique", "u-7");
        assertEquals(2, refused.exit(), refused.toString());
        assertTrue(refused.err().startsWith("binomic job submit: task 'reindex' is debounced (Task.Builder.debounce), and this submit"
                + " asks for a unique key (--unique): a duplicate of a unique job is dropped, one of a debounced job replaces it;"
                + " leave the unique key out, or submit to a task that is not debounced\n"), refused.err());
        assertEquals(0, broker.stats("search").ready() + broker.stats("search").delayed(), "nothing submitted");
    }

    /**
     * Found by a newcomer: a submit of a task declared unique or debounced (its key derived from the argument) merged "as
     * its task is declared unique or debounced", without the key that matched, so nothing said why it merged.
     */
    @Test
    void aSubmitMergedByATasksDeclaredKeyNamesTheKey() {
        Task<String, Void> refresh = Task.builder("refresh", String.class).queue("feeds")
                .unique(Uniqueness.whileQueuedOrRunning(Duration.ofHours(1)), feed -> "feed-" + feed).build();
        Task<String, Void> reindex = Task.builder("reindex", String.class).queue("search").delay(Duration.ofHours(1))
                .debounce(user -> "user-" + user).build();
        BinomicCli.Connector withRefresh = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(refresh, s -> null).handle(reindex, s -> null).build().start();
        broker.reclaim("search", "worker-1", Duration.ofMinutes(1), 1);
        broker.reclaim("feeds", "worker-1", Duration.ofMinutes(1), 1);
        CliRun first = CliRun.of(Map.of(), withRefresh, "job", "submit", "--task", "refresh", "--json", "\"7\"");
        assertEquals(0, first.exit(), first.toString());

        CliRun again = CliRun.of(Map.of(), withRefresh, "job", "submit", "--task", "refresh", "--json", "\"7\"");

        assertEquals(first.out(), again.out(), "the same job");
        assertEquals("binomic job submit: merged into job " + first.out().strip() + ", which holds unique key 'feed-7', the key"
                + " task 'refresh' declares for this argument (a duplicate of a unique job is dropped): no new job was queued\n",
                again.err());

        CliRun waiting = CliRun.of(Map.of(), withRefresh, "job", "submit", "--task", "reindex", "--json", "\"ada\"");
        CliRun replaced = CliRun.of(Map.of(), withRefresh, "job", "submit", "--task", "reindex", "--json", "\"ada\"");
        assertEquals(waiting.out(), replaced.out(), "the same job");
        assertEquals("binomic job submit: merged into job " + waiting.out().strip() + ", which was waiting under debounce key"
                + " 'user-ada', the key task 'reindex' declares for this argument, and now takes this submit's argument and due"
                + " time: no new job was queued\n", replaced.err());
    }

    /** A debounced submit that replaced the waiting job says so, naming it; the first, which replaced nothing, does not. */
    @Test
    void aDebouncedSubmitThatReplacedTheWaitingJobSaysSo() {
        broker.start(List.of("search"));
        broker.reclaim("search", "worker-1", Duration.ofMinutes(1), 1);
        CliRun first = run("job", "submit", "--task", "reindex", "--queue", "search", "--json", "{}", "--delay", "1h", "--debounce",
                "ada", "--any-task");
        assertEquals(0, first.exit(), first.toString());
        assertEquals("", first.err());

        CliRun again = run("job", "submit", "--task", "reindex", "--queue", "search", "--json", "{\"n\":2}", "--delay", "1h",
                "--debounce", "ada", "--any-task");

        assertEquals(0, again.exit(), again.toString());
        assertEquals(first.out(), again.out(), "the same job");
        assertEquals("binomic job submit: merged into job " + first.out().strip() + ", which was waiting under debounce key 'ada' and"
                + " now takes this submit's argument and due time: no new job was queued\n", again.err());
        assertEquals(1, broker.stats("search").delayed());
    }

    /**
     * A merged submit queued nothing, but the job it stands for waits on the queue all the same: a queue no worker
     * reads is warned of as for a fresh submit.
     */
    @Test
    void aSubmitMergedIntoAJobOnAQueueNoWorkerReadsWarnsAsAFreshOneDoes() {
        UUID existing = submitUntrackedUnique("fresh", "k");

        CliRun merged = run("job", "submit", "--task", "send", "--queue", "fresh", "--json", "{}", "--unique", "k", "--any-task");

        assertEquals(0, merged.exit(), merged.toString());
        assertEquals(existing + "\n", merged.out());
        assertTrue(merged.err().endsWith("binomic job submit: warning: no worker reads queue 'fresh' (it has no consumer): the job"
                + " waits there until a worker of that queue starts\n"), merged.err());
    }

    /** Found by outside testers: a mistyped queue listed no dead letters, and a replay or purge of it reported success. */
    @Test
    void dlqCommandsRefuseAQueueNothingKnowsWithTheClosestNameUnlessAnyQueueMeansIt() throws Exception {
        deadLetter("emails", "send", 2, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");
        for (String[] command : new String[][] {{"dlq", "list", "--queues", "emials"}, {"dlq", "list", "--queues", "emials", "--details"},
                {"dlq", "replay", "--queues", "emails,emials", "--all"}, {"dlq", "purge", "--queues", "emials", "--task", "send"},
                {"dlq", "replay", "--queues", "emials", "--id", "1"}, {"dlq", "purge", "--queues", "emials", "--id", "1"}}) {
            CliRun refused = run(command);
            assertEquals(2, refused.exit(), refused.toString());
            assertEquals("", refused.out(), "nothing done, not even for the known queue: " + refused);
            assertTrue(refused.err().startsWith("binomic " + command[0] + " " + command[1] + ": queue 'emials' is not known: no task on"
                    + " the module path or worker.queues setting names it, and the broker holds no job, consumer group, dead letter,"
                    + " pause, limit or recent activity of it; did you mean 'emails'? Else add --any-queue to use the name as typed\n"),
                    refused.err());
        }
        assertEquals(2, broker.stats("emails").deadLetters(), "nothing replayed or purged");

        CliRun listed = run("dlq", "list", "--queues", "emials", "--any-queue");
        assertEquals(0, listed.exit(), listed.toString());
        assertTrue(listed.out().endsWith("0 dead letter(s)\n"), listed.out());
        CliRun far = run("dlq", "purge", "--queues", "zzz", "--all");
        assertEquals(2, far.exit(), far.toString());
        assertTrue(far.err().contains("queue 'zzz' is not known") && far.err().contains("; check the name, or add --any-queue to use"
                + " the name as typed\n"), far.err());
        CliRun replayed = run("dlq", "replay", "--queues", "emails", "--all");
        assertEquals("replayed 2 dead letter(s) of queue emails\n", replayed.out(), "a known queue needs no flag");
    }

    /**
     * Found by an outside tester: from a CLI without the application's tasks, a mistyped task name was
     * submitted with no word, and the job went to the dead letters as TASK_NOT_FOUND.
     */
    @Test
    void aSubmitTheCliCannotCheckTheTaskOfSaysSoUnlessAnyTaskMeansIt() {
        broker.start(List.of("busy"));
        enqueue("busy", "send", 1);
        broker.reclaim("busy", "worker-1", Duration.ofMinutes(1), 1);
        CliRun unchecked = run("job", "submit", "--task", "send", "--queue", "busy", "--json", "{}");
        assertEquals(0, unchecked.exit(), unchecked.toString());
        assertEquals(UNCHECKED_SEND, unchecked.err());
        CliRun meant = run("job", "submit", "--task", "send", "--queue", "busy", "--json", "{}", "--any-task");
        assertEquals(0, meant.exit(), meant.toString());
        assertEquals("", meant.err(), "--any-task: the name is meant as typed");
    }

    /** Found by an outside tester: a task on the CLI's module path sent to another queue ran past its declaration. */
    @Test
    void aSubmitOfATaskOnTheModulePathTakesItsQueueAndRefusesAnotherUnlessAnyTaskMeansIt() {
        Task<String, Void> greet = Task.builder("greet", String.class).queue("mail").build();
        BinomicCli.Connector withGreet = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(greet, s -> null).build().start();

        CliRun declared = CliRun.of(Map.of(), withGreet, "job", "submit", "--task", "greet", "--json", "\"x\"");
        assertEquals(0, declared.exit(), declared.toString());
        assertEquals(1, broker.stats("mail").ready(), "on the task's own queue");

        CliRun other = CliRun.of(Map.of(), withGreet, "job", "submit", "--task", "greet", "--queue", "post", "--json", "\"x\"",
                "--create");
        assertEquals(2, other.exit(), other.toString());
        assertTrue(other.err().contains("task 'greet' is declared on queue 'mail' (a task on this CLI's module path), not 'post':"
                + " leave --queue out"), other.err());
        assertEquals(0, broker.stats("post").ready(), "nothing submitted");

        CliRun meant = CliRun.of(Map.of(), withGreet, "job", "submit", "--task", "greet", "--queue", "post", "--json", "\"x\"",
                "--create", "--any-task");
        assertEquals(0, meant.exit(), meant.toString());
        assertEquals(1, broker.stats("post").ready(), "--any-task: the name sent to that queue as typed");
    }

    /** Found by an outside tester: a mistyped task was paused (or submitted) with exit 0 while the real one ran on. */
    @Test
    void aMistypedTaskIsRefusedForPauseResumeAndSubmitUnlessAnyTaskMeansIt() {
        Task<String, Void> greet = Task.builder("greet", String.class).queue("mail").build();
        BinomicCli.Connector withGreet = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(greet, s -> null).build().start();
        for (String[] write : new String[][] {{"queue", "pause", "mail", "--task", "gret"}, {"queue", "resume", "mail", "--task", "gret"},
                {"job", "submit", "--task", "gret", "--queue", "mail", "--json", "\"x\""}}) {
            CliRun refused = CliRun.of(Map.of(), withGreet, write);
            assertEquals(2, refused.exit(), refused.toString());
            assertTrue(refused.err().startsWith("binomic " + write[0] + " " + write[1] + ": task 'gret' is not known: no task on the"
                    + " module path has that name and it is not paused in queue mail; did you mean 'greet'? Else add --any-task to use"
                    + " the name as typed\n"), refused.err());
        }
        assertEquals(0, broker.stats("mail").ready(), "nothing submitted");
        // Without --queue, the typo was told only that --queue is required, which would send it on to the queue given.
        CliRun noQueue = CliRun.of(Map.of(), withGreet, "job", "submit", "--task", "gret", "--json", "\"x\"");
        assertEquals(2, noQueue.exit(), noQueue.toString());
        assertTrue(noQueue.err().startsWith("binomic job submit: task 'gret' is not known: no task on the module path has that name;"
                + " did you mean 'greet' (on queue mail)? Else give --queue and add --any-task to use the name as typed\n"), noQueue.err());
        assertEquals(0, broker.stats("mail").ready(), "nothing submitted");
        CliRun otherName = CliRun.of(Map.of(), withGreet, "queue", "pause", "mail", "--task", "render");
        assertEquals(2, otherName.exit(), "the CLI knows the application's tasks: " + otherName);

        assertEquals("paused queue mail task gret on broker memory://\n", CliRun.of(Map.of(), withGreet, "queue", "pause", "mail", "--task", "gret",
                "--any-task").out());
        assertEquals("resumed queue mail task gret on broker memory://\n", CliRun.of(Map.of(), withGreet, "queue", "resume", "mail", "--task", "gret").out(),
                "known once paused");
        assertEquals(0, CliRun.of(Map.of(), withGreet, "queue", "pause", "mail", "--task", "greet").exit(), "a task on the path");
    }

    /**
     * Found by an outside tester: pausing a task of another queue was accepted with exit 0, and the library's warning then
     * gave a shell user Java calls to undo it. It is refused as a submit of that task to another queue is.
     */
    @Test
    void aTaskOfAnotherQueueIsRefusedForPauseAndResumeUnlessAnyTaskMeansIt() {
        Task<String, Void> greet = Task.builder("greet", String.class).queue("mail").build();
        BinomicCli.Connector withGreet = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(greet, s -> null).build().start();
        broker.start(List.of("post"));
        enqueue("post", "ship", 1);
        for (String verb : List.of("pause", "resume")) {
            CliRun refused = CliRun.of(Map.of(), withGreet, "queue", verb, "post", "--task", "greet");
            assertEquals(2, refused.exit(), refused.toString());
            assertTrue(refused.err().startsWith("binomic queue " + verb + ": task 'greet' is not a task of queue post: the task of that"
                    + " name on the module path is declared on queue 'mail', and it is not paused in queue post; did you mean task"
                    + " 'greet' of queue 'mail'? Else add --any-task to use the name on queue post as typed\n"), refused.err());
        }
        assertEquals(PauseState.NONE, broker.capability(Pausing.class).orElseThrow().pauseStates(List.of("post")).get("post"),
                "nothing paused");
        CliRun meant = CliRun.of(Map.of(), withGreet, "queue", "pause", "post", "--task", "greet", "--any-task");
        assertEquals("paused queue post task greet on broker memory://\n", meant.out(), meant.toString());
        assertEquals(0, CliRun.of(Map.of(), withGreet, "queue", "resume", "post", "--task", "greet").exit(), "known once paused");
    }

    /** Found by an outside tester: the refusal of a task far from any known name ended "...; Else add --any-task". */
    @Test
    void theRefusalOfAnUnknownTaskWithNoCloseNameReadsAsASentence() {
        Task<String, Void> greet = Task.builder("greet", String.class).queue("mail").build();
        BinomicCli.Connector withGreet = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().queues(queues).build()).schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).handle(greet, s -> null).build().start();
        CliRun refused = CliRun.of(Map.of(), withGreet, "queue", "pause", "mail", "--task", "zzzzzz");
        assertEquals(2, refused.exit(), refused.toString());
        assertTrue(refused.err().startsWith("binomic queue pause: task 'zzzzzz' is not known: no task on the module path has that name"
                + " and it is not paused in queue mail; check the name, or add --any-task to use the name as typed\n"), refused.err());
    }

    /**
     * Found by a newcomer: a CLI pointed at the wrong Redis showed empty tables and "not found" without saying which
     * broker it had read. Every read that finds nothing now names it, its password masked.
     */
    @Test
    void readsThatFindNothingNameTheBrokerTheyRead() {
        BinomicCli.Connector atUrl = (url, queues) -> Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl(url).worker(WorkerConfig.builder().queues(queues).build())
                        .schedulePeriodicTasks(false).build())
                .broker(survivesClose).scheduler(scheduler).build().start();
        String read = "broker redis://ada:****@wrong-host:6380";
        Map<String, String> env = Map.of("BINOMIC_BROKER_URL", "redis://ada:s3cret@wrong-host:6380");
        String unknown = UUID.randomUUID().toString();
        List<CliRun> runs = List.of(
                CliRun.of(env, atUrl, "queues"),
                CliRun.of(env, atUrl, "queues", "--queues", "emails"),
                CliRun.of(env, atUrl, "dlq", "list", "--queues", "emails", "--any-queue"),
                CliRun.of(env, atUrl, "dlq", "list", "--queues", "emails", "--any-queue", "--details"),
                CliRun.of(env, atUrl, "job", "show", unknown, "--queue", "emails"),
                CliRun.of(env, atUrl, "job", "cancel", unknown, "--queue", "emails"),
                CliRun.of(env, atUrl, "workflow", "show", unknown),
                CliRun.of(env, atUrl, "workflow", "cancel", unknown),
                CliRun.of(env, atUrl, "batch", "show", unknown),
                CliRun.of(env, atUrl, "batch", "cancel", unknown));
        for (CliRun run : runs) {
            assertTrue(run.err().contains(read), run.toString());
            assertFalse(run.toString().contains("s3cret"), run.toString());
        }
        assertTrue(runs.get(1).err().endsWith("binomic queues: nothing found on " + read + ": no queue shown holds a job, dead"
                + " letter or consumer; if some were expected, check the broker (--broker, BINOMIC_BROKER_URL or broker.url)\n"),
                runs.get(1).err());
        assertTrue(runs.get(4).err().startsWith("no status is kept for job " + unknown + " on queue emails of " + read + " (queue"),
                runs.get(4).err());

        assertEquals("no workflow " + unknown + " on " + read + ": a wrong id or broker, or a workflow past its retention\n",
                runs.get(6).err());

        enqueue("emails", "send", 1);
        CliRun found = CliRun.of(env, atUrl, "queues", "--queues", "emails");
        assertFalse(found.err().contains(read), "a read that found something: " + found.err());
    }

    @Test
    void queuesWithoutAnyKnownQueueSaysHowToName() {
        CliRun run = run("queues");
        assertEquals(2, run.exit());
        assertTrue(run.err().startsWith("binomic queues: no queues to look at on broker memory://: name them with --queues"),
                run.err());
    }

    @Test
    void dlqListGroupsByTaskReasonAndFailureClassLargestFirst() throws Exception {
        deadLetter("emails", "send", 3, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");
        deadLetter("emails", "send", 1, DeadLetterReason.NON_RETRYABLE, "java.lang.IllegalArgumentException");
        deadLetter("emails", "bounce", 2, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");

        CliRun run = run("dlq", "list", "--queues", "emails");

        assertEquals(0, run.exit(), run.toString());
        assertEquals("""
                QUEUE   TASK    REASON         ERROR CLASS                         COUNT
                emails  send    MAX_ATTEMPTS   java.net.ConnectException               3
                emails  bounce  MAX_ATTEMPTS   java.net.ConnectException               2
                emails  send    NON_RETRYABLE  java.lang.IllegalArgumentException      1
                6 dead letter(s)
                """, run.out());
        assertEquals("""
                QUEUE   TASK    REASON        ERROR CLASS                COUNT
                emails  bounce  MAX_ATTEMPTS  java.net.ConnectException      2
                2 dead letter(s)
                """, run("dlq", "list", "--queues", "emails", "--task", "bounce").out());
    }

    @Test
    void dlqListDetailsShowsEachEntryOnOneLine() throws Exception {
        deadLetter("emails", "send", 2, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");

        CliRun run = run("dlq", "list", "--queues", "emails", "--details", "--limit", "1");

        assertEquals(0, run.exit(), run.toString());
        String[] lines = run.out().split("\n");
        assertEquals(3, lines.length, run.out());
        assertTrue(lines[0].matches(" *ID +QUEUE +TASK +REASON +ERROR CLASS +ATTEMPTS +FAILED AT +MESSAGE"), lines[0]);
        assertTrue(lines[1].matches(" *\\S+ +emails +send +MAX_ATTEMPTS +java.net.ConnectException +3 +2026-11-30T01:02:03Z +boom second line"),
                lines[1]);
        assertEquals("1 dead letter(s) shown", lines[2]);
    }

    @Test
    void dlqListDetailsCutsLongMessagesAndWideShowsThemWhole() throws Exception {
        broker.start(List.of("emails"));
        enqueue("emails", "send", 1);
        String longMessage = "expected a whole number in the range of Integer, got 99999999999 at $.n of the payload";
        Delivery d = broker.fetch(List.of("emails"), "test-consumer", 1, Duration.ZERO).getFirst();
        broker.settle("test-consumer", List.of(new Settlement.DeadLetter(d,
                new DeadLetter.Failure(DeadLetterReason.DECODE_ERROR, "decode", longMessage, "", 1, FAILED_AT))));

        String cut = run("dlq", "list", "--queues", "emails", "--details").out();
        String whole = run("dlq", "list", "--queues", "emails", "--details", "--wide").out();

        assertTrue(cut.contains(longMessage.substring(0, 57) + "...") && !cut.contains(longMessage), cut);
        assertTrue(whole.contains(longMessage), whole);
    }

    @Test
    void replayAllPutsEveryDeadLetterBackAndShowsProgressOnStderr() throws Exception {
        int many = (int) DlqChangeCommand.PROGRESS_THRESHOLD + 100;
        deadLetter("emails", "send", many, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");

        CliRun run = run("dlq", "replay", "--queues", "emails", "--all");

        assertEquals(0, run.exit(), run.toString());
        assertEquals("replayed " + many + " dead letter(s) of queue emails\n", run.out());
        assertTrue(run.err().startsWith("\rreplay emails [------------------------------] 0/" + many + " 0%"), run.err());
        assertTrue(run.err().endsWith("\rreplay emails [##############################] " + many + "/" + many + " 100%\n"),
                run.err());
        assertEquals(many, broker.stats("emails").ready());
        assertEquals(0, broker.stats("emails").deadLetters());
    }

    @Test
    void purgeByFilterDeletesOnlyTheMatchingOnesWithoutProgressForFewEntries() throws Exception {
        deadLetter("emails", "send", 2, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");
        deadLetter("emails", "send", 1, DeadLetterReason.NON_RETRYABLE, "java.lang.IllegalArgumentException");

        CliRun run = run("dlq", "purge", "--queues", "emails", "--reason", "non_retryable");

        assertEquals(0, run.exit(), run.toString());
        assertEquals("purged 1 dead letter(s) of queue emails\n", run.out());
        assertEquals("", run.err());
        assertEquals(2, broker.stats("emails").deadLetters());
    }

    @Test
    void replayByIdReplaysThatOneAndFailsForAnUnknownId() throws Exception {
        deadLetter("emails", "send", 2, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");
        String id = BrokerCapabilities.deadLetterStore(broker).readDeadLetters("emails", java.util.Optional.empty(), 10).getFirst().id();

        CliRun run = run("dlq", "replay", "--queues", "emails", "--id", id, "--id", "9999999999");

        assertEquals(1, run.exit(), run.toString());
        assertEquals("replayed " + id + "\n", run.out());
        assertEquals("binomic dlq replay: no dead letter 9999999999 in queue emails\n", run.err());
        assertEquals(1, broker.stats("emails").deadLetters());
        assertEquals(1, broker.stats("emails").ready());
    }

    /** Dead-letters {@code n} deliveries whose entry was too broken to decode a message from. */
    private void deadLetterBroken(String queue, int n) throws InterruptedException {
        broker.start(List.of(queue));
        enqueue(queue, "orphan", n);
        // The memory broker cannot store a broken entry: dead-letter its deliveries as if their fields had not decoded.
        for (Delivery d : broker.fetch(List.of(queue), "test-consumer", n, Duration.ZERO)) {
            Delivery broken = Delivery.malformed(queue, d.receipt(), Map.of("task", "orphan"), d.deliveryCount(), "no 'id' field");
            broker.settle("test-consumer", List.of(new Settlement.DeadLetter(broken,
                    new DeadLetter.Failure(DeadLetterReason.DECODE_ERROR, "decode", "no 'id' field", "", 1, FAILED_AT))));
        }
    }

    /** Before, an existing but undecodable letter was reported as "no dead letter". */
    @Test
    void replayByIdOfAnUndecodableLetterSaysWhyItCannotBeReplayed() throws Exception {
        deadLetterBroken("emails", 1);
        String id = BrokerCapabilities.deadLetterStore(broker).readDeadLetters("emails", java.util.Optional.empty(), 10).getFirst().id();

        CliRun run = run("dlq", "replay", "--queues", "emails", "--id", id);

        assertEquals(1, run.exit(), run.toString());
        assertEquals("", run.out());
        assertEquals("binomic dlq replay: dead letter " + id + " of queue emails cannot be replayed: its message could not be"
                + " decoded (DECODE_ERROR), only its raw fields are kept; see it with 'binomic dlq list --details',"
                + " delete it with 'binomic dlq purge --id " + id + "'\n", run.err());
        assertEquals(1, broker.stats("emails").deadLetters());
    }

    @Test
    void aMalformedIdIsABadUsageSaidInOneLineAndNothingIsDone() throws Exception {
        deadLetter("emails", "send", 1, DeadLetterReason.MAX_ATTEMPTS, "java.net.ConnectException");
        String id = BrokerCapabilities.deadLetterStore(broker).readDeadLetters("emails", java.util.Optional.empty(), 10).getFirst().id();

        for (String verb : List.of("replay", "purge")) {
            CliRun run = run("dlq", verb, "--queues", "emails", "--id", id, "--id", "not-an-id");

            assertEquals(2, run.exit(), run.toString());
            assertEquals("", run.out());
            assertTrue(run.err().startsWith("binomic dlq " + verb + ": 'not-an-id' is not a dead-letter id of the memory broker"
                    + " (digits, as 'dlq list --details' shows them)\nRun 'binomic dlq " + verb + " --help' for its options.\n"),
                    run.err());
        }
        assertEquals(1, broker.stats("emails").deadLetters());
    }

    /** Before, it printed "replayed 3" and said nothing of the two it could not replay. */
    @Test
    void replayByFilterSaysWhatItSkippedAndWhy() throws Exception {
        deadLetter("emails", "send", 3, DeadLetterReason.DECODE_ERROR, "decode");
        deadLetterBroken("emails", 2);

        CliRun run = run("dlq", "replay", "--queues", "emails", "--reason", "DECODE_ERROR");

        assertEquals(1, run.exit(), run.toString());
        assertEquals("replayed 3 dead letter(s) of queue emails\n", run.out());
        assertEquals("binomic dlq replay: skipped 2 dead letter(s) of queue emails that cannot be replayed: their message"
                + " could not be decoded, only its raw fields are kept; see them with 'binomic dlq list --details --queues emails',"
                + " delete them with 'binomic dlq purge --id ID'\n", run.err());
        assertEquals(2, broker.stats("emails").deadLetters());
        assertEquals(3, broker.stats("emails").ready());
    }

    /** What the CLI's connection does: inspecting a queue (or a mistyped name) must not create it. */
    @Test
    void anInspectionInstanceStartsTheBrokerWithoutPreparingAnyQueue() {
        List<Object> started = new java.util.concurrent.CopyOnWriteArrayList<>();
        Broker recording = (Broker) Proxy.newProxyInstance(Broker.class.getClassLoader(), new Class<?>[] {Broker.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("start")) {
                        started.add(args[0]);
                    }
                    try {
                        return method.invoke(broker, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().queues(List.of("typo")).build())
                .schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config).broker(recording).scheduler(scheduler).prepareQueues(false).build().start()) {
            assertEquals(List.of(List.of()), started);
            IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, binomic::startWorker);
            assertTrue(refused.getMessage().contains("prepareQueues(false)"), refused.getMessage());
        }
    }

    @Test
    void batchShowPrintsTheCountsAndBatchCancelCancelsItsJobs() {
        Task<String, Void> work = Task.builder("work", String.class).queue("batches").build();
        UUID id;
        try (Binomic producer = connect("memory://", List.of("batches"))) {
            id = producer.batch().add(work, "a").add(work, "b").submit().id();
        }
        CliRun show = run("batch", "show", "--id", id.toString());
        assertEquals(0, show.exit(), show.err());
        assertTrue(show.out().contains("state      RUNNING") && show.out().contains("jobs       2")
                && show.out().contains("pending    2") && show.out().contains("callbacks  none enqueued"), show.out());

        CliRun cancel = run("batch", "cancel", "--id", id.toString());
        assertEquals(0, cancel.exit(), cancel.err());
        assertEquals("CANCELLED " + id, cancel.out().strip(), "the words of 'binomic workflow cancel' and 'binomic job cancel'");
        assertTrue(run("batch", "show", id.toString()).out().contains("(cancel requested)"), "the id as the first word");
        CliRun again = run("batch", "cancel", "--id", id.toString());
        assertEquals(1, again.exit(), "as 'binomic workflow cancel' of a workflow cancelled already");
        assertEquals("ALREADY_ENDED " + id, again.out().strip(), "each of its queued jobs was cancelled already");

        UUID ended;
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().queues("batches")
                .pollTimeout(java.time.Duration.ofMillis(50)).build()).schedulePeriodicTasks(false).build();
        try (Binomic worker = Binomic.builder().config(config).broker(survivesClose).scheduler(scheduler)
                .handle(work, s -> null).build().start()) {
            ended = worker.batch().add(work, "c").submit().id();
            worker.startWorker();
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
            while (worker.batch(ended).status().orElseThrow().pending() > 0 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
            }
        }
        CliRun cancelEnded = run("batch", "cancel", "--id", ended.toString());
        assertEquals(1, cancelEnded.exit(), "as 'binomic workflow cancel' of an ended workflow: nothing changed");
        assertEquals("ALREADY_ENDED " + ended, cancelEnded.out().strip());
        assertTrue(run("batch", "show", "--id", ended.toString()).out().contains("state      SUCCEEDED\n"),
                "an ended batch is left as it ended");
        assertTrue(run("batch", "show", " " + ended + " ").out().contains("state      SUCCEEDED\n"),
                "an id pasted with spaces around it, as the dashboard takes it");

        CliRun unknown = run("batch", "show", "--id", UUID.randomUUID().toString());
        assertEquals(1, unknown.exit());
        assertTrue(unknown.err().contains("no batch"), unknown.err());
        UUID nobody = UUID.randomUUID();
        CliRun cancelUnknown = run("batch", "cancel", "--id", nobody.toString());
        assertEquals(1, cancelUnknown.exit());
        assertEquals("NOT_FOUND " + nobody, cancelUnknown.out().strip(), "as 'binomic workflow cancel' says it");
        assertEquals("no batch " + nobody + " on broker memory://: a wrong id or broker, or a batch past its retention",
                cancelUnknown.err().strip());
        CliRun bad = run("batch", "show", "nope");
        assertEquals(2, bad.exit());
        assertTrue(bad.err().contains("is not a batch id"), bad.err());
    }

    /**
     * Found by a newcomer: job, batch and workflow ids look alike, and a workflow's id given to {@code batch show} said only
     * "a wrong id or broker". An id of another kind is now named as such, with the command that reads it.
     */
    @Test
    void anIdOfAnotherKindIsNamedWithTheCommandThatReadsIt() {
        Task<String, Void> work = Task.builder("work", String.class).queue("mixed").keepStatusFor(java.time.Duration.ofMinutes(5)).build();
        UUID batch;
        UUID workflow;
        UUID job;
        try (Binomic producer = connect("memory://", List.of("mixed"))) {
            batch = producer.batch().add(work, "a").submit().id();
            workflow = producer.submit(io.binomic.core.Workflow.builder().then("fetch", work, "a").build()).id();
            job = producer.submit(work, "b").id();
        }
        CliRun batchShow = run("batch", "show", "--id", workflow.toString());
        assertEquals(1, batchShow.exit());
        assertEquals("no batch " + workflow + " on broker memory://: it is the id of a workflow: binomic workflow show --id " + workflow,
                batchShow.err().strip());
        CliRun workflowShow = run("workflow", "show", batch.toString());
        assertEquals(1, workflowShow.exit());
        assertEquals("no workflow " + batch + " on broker memory://: it is the id of a batch: binomic batch show --id " + batch,
                workflowShow.err().strip());
        CliRun workflowCancel = run("workflow", "cancel", "--id", batch.toString());
        assertEquals("NOT_FOUND " + batch, workflowCancel.out().strip(), "nothing cancelled");
        assertEquals("no workflow " + batch + " on broker memory://: it is the id of a batch: binomic batch cancel --id " + batch,
                workflowCancel.err().strip());
        CliRun jobShow = run("job", "show", workflow.toString(), "--queue", "mixed");
        assertEquals(1, jobShow.exit());
        assertTrue(jobShow.err().strip().endsWith(": it is the id of a workflow: binomic workflow show --id " + workflow), jobShow.err());
        CliRun jobCancel = run("job", "cancel", batch.toString(), "--queue", "mixed");
        assertTrue(jobCancel.err().strip().endsWith(": it is the id of a batch: binomic batch cancel --id " + batch), jobCancel.err());
        CliRun batchOfAJob = CliRun.of(Map.of(), (url, queues) -> connect(url, List.of("mixed")), "batch", "show", job.toString());
        assertEquals("no batch " + job + " on broker memory://: it is the id of a job: binomic job show --id " + job,
                batchOfAJob.err().strip(), "a job of a queue the CLI knows");
        UUID nobody = UUID.randomUUID();
        assertTrue(run("batch", "show", nobody.toString()).err().contains("a wrong id or broker"), "an id of nothing, as before");
    }

    @Test
    void workflowShowPrintsEachJobAndWorkflowCancelStopsIt() {
        Task<String, Void> work = Task.builder("work", String.class).queue("workflows").build();
        UUID id;
        try (Binomic producer = connect("memory://", List.of("workflows"))) {
            id = producer.submit(io.binomic.core.Workflow.builder().then("fetch", work, "a").then("store", work, "b").build()).id();
        }
        CliRun show = run("workflow", "show", "--id", id.toString());
        assertEquals(0, show.exit(), show.err());
        assertTrue(show.out().contains("state      RUNNING") && show.out().contains("jobs       2"), show.out());
        assertTrue(show.out().lines().anyMatch(l -> l.startsWith("NAME") && l.contains("STATE") && l.contains("QUEUE")), show.out());
        assertTrue(show.out().lines().anyMatch(l -> l.startsWith("store") && l.contains("WAITING") && l.contains("workflows")
                && l.matches(".* fetch +skip")), show.out());

        CliRun cancel = run("workflow", "cancel", "--id", id.toString());
        assertEquals(0, cancel.exit(), cancel.err());
        assertEquals("CANCELLED " + id, cancel.out().strip());
        CliRun after = run("workflow", "show", id.toString()); // the id as the first word
        assertTrue(after.out().contains("(cancel requested)") && after.out().lines().anyMatch(l -> l.startsWith("store")
                && l.contains("CANCELLED")), after.out());

        CliRun again = run("workflow", "cancel", "--id", id.toString());
        assertEquals(1, again.exit(), "as 'binomic job cancel' of an ended job");
        assertEquals("ALREADY_ENDED " + id, again.out().strip());

        CliRun unknown = run("workflow", "show", "--id", UUID.randomUUID().toString());
        assertEquals(1, unknown.exit());
        assertTrue(unknown.err().contains("no workflow"), unknown.err());
        UUID nobody = UUID.randomUUID();
        CliRun cancelUnknown = run("workflow", "cancel", "--id", nobody.toString());
        assertEquals(1, cancelUnknown.exit());
        assertEquals("NOT_FOUND " + nobody, cancelUnknown.out().strip());
        assertEquals("no workflow " + nobody + " on broker memory://: a wrong id or broker, or a workflow past its retention",
                cancelUnknown.err().strip());
        CliRun bad = run("workflow", "cancel", "--id", "nope");
        assertEquals(2, bad.exit());
        assertTrue(bad.err().contains("is not a workflow id"), bad.err());
    }

    @Test
    void workflowShowSaysWhatEachJobDoesWhenADependencyFails() {
        Task<String, Void> work = Task.builder("work", String.class).queue("workflows").build();
        UUID id;
        try (Binomic producer = connect("memory://", List.of("workflows"))) {
            id = producer.submit(io.binomic.core.Workflow.builder()
                    .add("fetch", work, "a")
                    .add("thumb", work, "b", io.binomic.core.Workflow.dependsOn("fetch"))
                    .add("resize", work, "c", io.binomic.core.Workflow.dependsOn("fetch"))
                    .add("publish", work, "d", io.binomic.core.Workflow.dependsOn("resize", "thumb").ignoringFailureOf("thumb"))
                    .add("report", work, "e", io.binomic.core.Workflow.dependsOn("publish")
                            .whenDependencyFails(io.binomic.core.Workflow.DependencyFailure.RUN_ANYWAY))
                    .build()).id();
        }
        CliRun show = run("workflow", "show", id.toString());
        assertEquals(0, show.exit(), show.err());
        Map<String, String> policy = new java.util.LinkedHashMap<>();
        List<String> lines = show.out().lines().toList();
        String header = lines.stream().filter(l -> l.startsWith("NAME")).findFirst().orElseThrow();
        int column = header.indexOf("IF ONE FAILS");
        assertTrue(column > 0, show.out());
        lines.subList(lines.indexOf(header) + 1, lines.size()).forEach(l -> policy.put(l.substring(0, l.indexOf(' ')), l.substring(column).strip()));
        assertEquals(Map.of("fetch", "-", "thumb", "skip", "resize", "skip", "publish", "ignore thumb; else skip", "report", "run anyway"),
                policy, show.out());
    }

    @Test
    void aCancelledBatchShowsItsStateCancelledOnceItsJobsEnded() {
        Task<String, Void> work = Task.builder("work", String.class).queue("batches").build();
        UUID id;
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().queues("batches")
                .pollTimeout(java.time.Duration.ofMillis(50)).build()).schedulePeriodicTasks(false).build();
        try (Binomic worker = Binomic.builder().config(config).broker(survivesClose).scheduler(scheduler)
                .handle(work, s -> null).build().start()) {
            id = worker.batch().add(work, "a").add(work, "b").submit().id();
            assertEquals(io.binomic.api.JobHandle.CancelOutcome.CANCELLED, worker.batch(id).cancel());
            worker.startWorker(); // acks the cancelled jobs unrun
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
            while (worker.batch(id).status().orElseThrow().pending() > 0 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
            }
        }
        CliRun show = run("batch", "show", id.toString());
        assertTrue(show.out().contains("state      CANCELLED\n") && show.out().contains("cancelled  2\n"), show.out());
    }
}
