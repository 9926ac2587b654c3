package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.NonRetryableException;
import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskContext;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A worker in one JVM on the in-memory broker, through the public API only. */
class WorkerTest {
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private static WorkerConfig.Builder fastWorker() {
        return WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2));
    }

    private Binomic start(List<TaskBinding<?, ?>> bindings, TaskDefaults defaults, WorkerConfig worker) {
        return start(bindings, defaults, worker, null);
    }

    private Binomic start(List<TaskBinding<?, ?>> bindings, TaskDefaults defaults, WorkerConfig worker, Broker broker) {
        BinomicConfig config = BinomicConfig.builder().taskDefaults(defaults).worker(worker).build();
        Binomic.Builder builder = Binomic.builder().config(config).codec(new TextCodec()).broker(broker);
        if (broker instanceof ForwardingBroker forwarding) {
            builder.scheduler(forwarding.scheduler());
        }
        bindings.forEach(builder::handle);
        Binomic binomic = builder.build().start();
        opened.add(binomic);
        return binomic;
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    void submittedTasksRunOnceEachAndLeaveNothingBehind() throws Exception {
        Map<Integer, Integer> runs = new ConcurrentHashMap<>();
        Task<Integer, Void> square = Task.builder("square", Integer.class).build();
        TaskBinding<Integer, Void> squareBinding = square.handledBy((Integer n) -> {
            runs.merge(n, 1, Integer::sum);
            return null;
        });
        Binomic binomic = start(List.of(squareBinding), TaskDefaults.defaults(), fastWorker().concurrency(8).build());
        Worker worker = binomic.startWorker();

        binomic.submitAll(square, IntStream.range(0, 200).boxed().toList());

        await("200 tasks succeeded", () -> worker.counters().succeeded() == 200);
        await("the acks are flushed", () -> binomic.queueStats("default").pending() == 0);
        assertEquals(200, runs.size());
        assertTrue(runs.values().stream().allMatch(n -> n == 1), "each message runs once: " + runs);
        QueueStats stats = binomic.queueStats("default");
        assertEquals(0, stats.ready() + stats.pending() + stats.delayed() + stats.deadLetters());
    }

    /**
     * A stopped worker was still counted in its queue's CONSUMERS until a live worker's idle cleanup took it. One
     * that stops cleanly leaves at once; a task its grace cut off is put back, attempt unchanged (a deploy is no failure of
     * the job: found by an outside tester, each stop during a long task spent one of its attempts).
     */
    @Test
    void aStoppedWorkerLeavesItsQueuesConsumersAndPutsBackWhatItsGraceCutOff() throws Exception {
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        Task<String, Void> work = Task.builder("work", String.class).build();
        Binomic binomic = start(List.of(work.handledBy((String s) -> {
            attempts.add(TaskContext.current().attempt());
            Thread.sleep(attempts.size() == 1 ? 60_000 : 0);
            return null;
        })), TaskDefaults.defaults(), fastWorker().build());
        Worker clean = binomic.startWorker();
        await("the worker reads its queue", () -> binomic.queueStats("default").consumers() == 1);
        clean.stop(Duration.ofSeconds(2));
        assertEquals(0, binomic.queueStats("default").consumers(), "a worker that stopped cleanly is no consumer");

        Worker cut = binomic.startWorker();
        binomic.submit(work, "long");
        await("the task started", () -> attempts.size() == 1);
        cut.stop(Duration.ofMillis(100));
        QueueStats after = binomic.queueStats("default");
        assertEquals(0, after.pending(), "the task cut off is put back, not left pending for a reclaim: " + after);
        assertEquals(0, after.consumers(), "so its worker holds nothing and leaves: " + after);

        Worker next = binomic.startWorker();
        await("the task put back runs again", () -> next.counters().succeeded() == 1);
        assertEquals(List.of(1, 1), attempts, "the same attempt: the stop spent none");
    }

    /** A task that ignores the stop's interrupt is still running when the stop ends: it stays pending, with its consumer. */
    @Test
    void aTaskThatOutlivesTheStopStaysPendingWithItsConsumer() throws Exception {
        AtomicInteger spins = new AtomicInteger();
        Task<String, Void> deaf = Task.builder("deaf", String.class).build();
        Binomic binomic = start(List.of(deaf.handledBy((String s) -> {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < until) {
                spins.incrementAndGet(); // through the interrupt
            }
            return null;
        })), TaskDefaults.defaults(), fastWorker().build());
        Worker held = binomic.startWorker();
        binomic.submit(deaf, "x");
        await("the task runs", () -> spins.get() > 0);
        List<String> lines;
        try (CapturedWorkerLines captured = new CapturedWorkerLines()) {
            held.stop(Duration.ofMillis(100));
            lines = captured.lines();
        }
        QueueStats after = binomic.queueStats("default");
        assertEquals(1, after.pending(), "the task still running stays pending for reclaim: " + after);
        assertEquals(1, after.consumers(), "with the consumer that holds it: " + after);
        // The stop's last line counts the tasks the grace cut off, not only the outcomes.
        assertTrue(lines.stream().anyMatch(l -> l.contains(" stopped in ") && l.contains(", 1 task(s) cut off by the grace")),
                String.join("\n", lines));
    }

    @Test
    void failingTaskIsRetriedAfterItsBackoffWithIncreasingAttempts() throws Exception {
        List<Long> attemptTimes = new CopyOnWriteArrayList<>();
        Task<String, Void> flaky = Task.builder("flaky", String.class).backoff(Backoff.exponential(Duration.ofMillis(200), 2.0, Duration.ofSeconds(5))).build();
        TaskBinding<String, Void> flakyBinding = flaky.handledBy((String s) -> {
            attemptTimes.add(System.nanoTime());
            if (attemptTimes.size() < 3) {
                throw new IllegalStateException("not yet");
            }
            return null;
        });
        Binomic binomic = start(List.of(flakyBinding), TaskDefaults.defaults(), fastWorker().build());
        Worker worker = binomic.startWorker();

        binomic.submit(flaky, "x");

        await("third attempt succeeded", () -> worker.counters().succeeded() == 1);
        assertEquals(3, attemptTimes.size());
        assertEquals(2, worker.counters().retried());
        long firstWaitMs = (attemptTimes.get(1) - attemptTimes.get(0)) / 1_000_000;
        long secondWaitMs = (attemptTimes.get(2) - attemptTimes.get(1)) / 1_000_000;
        assertTrue(firstWaitMs >= 200, "first backoff is 200 ms, waited " + firstWaitMs);
        assertTrue(secondWaitMs >= 400, "second backoff is 400 ms, waited " + secondWaitMs);
        TaskStats stats = binomic.taskStats().getFirst();
        assertEquals(1, stats.succeeded());
        assertEquals(2, stats.failed());
        assertEquals(2, stats.retried());
    }

    @Test
    void taskFailingEveryAttemptEndsInTheDeadLetterQueue() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Task<String, Void> doomed = Task.builder("doomed", String.class).maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(50))).build();
        TaskBinding<String, Void> doomedBinding = doomed.handledBy((String s) -> {
            runs.incrementAndGet();
            throw new IllegalArgumentException("bad " + s);
        });
        Binomic binomic = start(List.of(doomedBinding), TaskDefaults.defaults(), fastWorker().build());
        binomic.startWorker();

        binomic.submit(doomed, "input");

        await("dead-lettered", () -> binomic.queueStats("default").deadLetters() == 1);
        assertEquals(2, runs.get());
        DeadLetter letter = binomic.deadLetters().list("default", DeadLetterFilter.all(), 10).getFirst();
        assertEquals(DeadLetterReason.MAX_ATTEMPTS, letter.failure().reason());
        assertEquals(IllegalArgumentException.class.getName(), letter.failure().errorClass());
        assertEquals("bad input", letter.failure().errorMessage());
        assertEquals(2, letter.failure().attempts());
        assertTrue(letter.failure().stackHead().startsWith("java.lang.IllegalArgumentException: bad input"));
    }

    @Test
    void overrunningTaskTimesOutAndCountsAsAFailedAttempt() throws Exception {
        Task<String, Void> slow = Task.builder("slow", String.class).timeout(Duration.ofMillis(200)).maxAttempts(1).build();
        TaskBinding<String, Void> slowBinding = slow.handledBy((String s) -> {
            Thread.sleep(Duration.ofSeconds(30));
            return null;
        });
        Binomic binomic = start(List.of(slowBinding), TaskDefaults.defaults(), fastWorker().build());
        Worker worker = binomic.startWorker();

        binomic.submit(slow, "x");

        await("timed out into the DLQ", () -> binomic.queueStats("default").deadLetters() == 1);
        assertEquals(1, worker.counters().failed());
        DeadLetter letter = binomic.deadLetters().list("default", DeadLetterFilter.all(), 1).getFirst();
        assertEquals("java.util.concurrent.TimeoutException", letter.failure().errorClass());
    }

    @Test
    void nonRetryableFailuresAreDeadLetteredAtOnce() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Task<String, Void> explicit = Task.builder("explicit", String.class).build();
        TaskBinding<String, Void> explicitBinding = explicit.handledBy((String s) -> {
            runs.incrementAndGet();
            throw new NonRetryableException("card declined");
        });
        Task<String, Void> declared = Task.builder("declared", String.class).nonRetryableOn(UnsupportedOperationException.class).build();
        TaskBinding<String, Void> declaredBinding = declared.handledBy((String s) -> {
            runs.incrementAndGet();
            throw new UnsupportedOperationException("never works");
        });
        Binomic binomic = start(List.of(explicitBinding, declaredBinding), TaskDefaults.defaults(), fastWorker().build());
        binomic.startWorker();

        binomic.submit(explicit, "a");
        binomic.submit(declared, "b");

        await("both dead-lettered", () -> binomic.queueStats("default").deadLetters() == 2);
        assertEquals(2, runs.get(), "no retry for a non-retryable failure");
        List<DeadLetterGroup> groups = binomic.deadLetters().groups("default");
        assertEquals(2, groups.size());
        assertTrue(groups.stream().allMatch(g -> g.reason() == DeadLetterReason.NON_RETRYABLE && g.count() == 1), groups.toString());
    }

    /**
     * The producer submits a definition nobody binds a handler for (it needs no registration to
     * submit); the worker, which has no handler for it, dead-letters it TASK_NOT_FOUND.
     */
    @Test
    void undecodablePayloadAndUnknownTaskAreDeadLetteredWithoutStoppingTheWorker() throws Exception {
        Task<Integer, Void> count = Task.builder("count", Integer.class).build();
        TaskBinding<Integer, Void> countBinding = count.handledBy((Integer n) -> null);
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        Task<String, Void> ghost = Task.builder("ghost", String.class).build();
        Binomic producer = start(List.of(), TaskDefaults.defaults(), fastWorker().build(), shared);
        Binomic binomic = start(List.of(countBinding), TaskDefaults.defaults(), fastWorker().build(), shared);
        Worker worker = binomic.startWorker();

        producer.submit(ghost, "boo");
        shared.enqueue(Message.fromWire(java.util.UUID.randomUUID(), "count", "default", 1, java.time.Instant.now(),
                "not a number".getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of()));
        binomic.submit(count, 7);

        await("the good message ran", () -> worker.counters().succeeded() == 1);
        await("two dead letters", () -> binomic.queueStats("default").deadLetters() == 2);
        List<DeadLetterReason> reasons = binomic.deadLetters().list("default", DeadLetterFilter.all(), 10).stream()
                .map(l -> l.failure().reason()).sorted().toList();
        assertEquals(List.of(DeadLetterReason.DECODE_ERROR, DeadLetterReason.TASK_NOT_FOUND), reasons);
        DeadLetter notFound = binomic.deadLetters().list("default", DeadLetterFilter.all().withReason(DeadLetterReason.TASK_NOT_FOUND), 10)
                .getFirst();
        assertEquals("ghost", notFound.message().orElseThrow().task());
    }

    @Test
    void delayTaskRunsNoSoonerThanItsDelay() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        long[] ranAt = new long[1];
        Task<String, Void> later = Task.builder("later", String.class).delay(Duration.ofMillis(500)).build();
        TaskBinding<String, Void> laterBinding = later.handledBy((String s) -> {
            ranAt[0] = System.nanoTime();
            ran.countDown();
            return null;
        });
        Binomic binomic = start(List.of(laterBinding), TaskDefaults.defaults(), fastWorker().build());
        binomic.startWorker();

        long submittedAt = System.nanoTime();
        binomic.submit(later, "x");
        assertEquals(1, binomic.queueStats("default").delayed());

        assertTrue(ran.await(10, TimeUnit.SECONDS));
        long waitedMs = (ranAt[0] - submittedAt) / 1_000_000;
        assertTrue(waitedMs >= 500, "ran after " + waitedMs + " ms");
    }

    @Test
    void noMoreTasksRunAtOnceThanTheConcurrencyLimit() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        Task<Integer, Void> busy = Task.builder("busy", Integer.class).build();
        TaskBinding<Integer, Void> busyBinding = busy.handledBy((Integer n) -> {
            peak.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(50);
            running.decrementAndGet();
            return null;
        });
        Binomic binomic = start(List.of(busyBinding), TaskDefaults.defaults(), fastWorker().concurrency(3).build());
        Worker worker = binomic.startWorker();

        binomic.submitAll(busy, IntStream.range(0, 30).boxed().toList());

        await("all done", () -> worker.counters().succeeded() == 30);
        assertEquals(3, peak.get());
    }

    @Test
    void stopWaitsForRunningTasksWithinTheGrace() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        Task<String, Void> task = Task.builder("short", String.class).build();
        TaskBinding<String, Void> taskBinding = task.handledBy((String s) -> {
            started.countDown();
            Thread.sleep(300);
            return null;
        });
        Binomic binomic = start(List.of(taskBinding), TaskDefaults.defaults(), fastWorker().build());
        Worker worker = binomic.startWorker();
        binomic.submit(task, "x");
        assertTrue(started.await(5, TimeUnit.SECONDS));

        worker.stop(Duration.ofSeconds(5));

        assertTrue(worker.isStopped());
        assertEquals(1, worker.counters().succeeded());
        assertEquals(0, binomic.queueStats("default").pending(), "its ack was flushed before the worker stopped");
    }

    @Test
    void deadLettersCanBeReplayedAndPurgedByFilter() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Task<String, Void> healing = Task.builder("healing", String.class).build();
        TaskBinding<String, Void> healingBinding = healing.handledBy((String s) -> {
            if (calls.incrementAndGet() <= 3) {
                throw new NonRetryableException("down");
            }
            return null;
        });
        Task<String, Void> broken = Task.builder("broken", String.class).build();
        TaskBinding<String, Void> brokenBinding = broken.handledBy((String s) -> {
            throw new NonRetryableException("always");
        });
        Binomic binomic = start(List.of(healingBinding, brokenBinding), TaskDefaults.defaults(), fastWorker().build());
        Worker worker = binomic.startWorker();
        binomic.submitAll(healing, List.of("a", "b", "c"));
        binomic.submit(broken, "z");
        await("four dead letters", () -> binomic.queueStats("default").deadLetters() == 4);
        DeadLetters dlq = binomic.deadLetters();

        List<Long> progress = new CopyOnWriteArrayList<>();
        long replayed = dlq.replay("default", DeadLetterFilter.all().withTask("healing"), progress::add);

        assertEquals(3, replayed);
        assertEquals(List.of(3L), progress);
        await("replayed messages ran", () -> worker.counters().succeeded() == 3);
        assertEquals(1, dlq.count("default", DeadLetterFilter.all()));
        assertEquals(1, dlq.purge("default", DeadLetterFilter.all().withReason(DeadLetterReason.NON_RETRYABLE)));
        assertEquals(0, binomic.queueStats("default").deadLetters());
    }

    /**
     * Submit refuses periodic, oversized and ill-typed submissions. It used to refuse a task not
     * registered with the instance too; now a producer submits definitions it has no handler for,
     * so that submission is accepted, and a worker without a handler for it dead-letters it
     * TASK_NOT_FOUND.
     */
    @Test
    void submitRefusesPeriodicAndOversizedTasksButAcceptsUnregisteredOnes() throws Exception {
        Task<Void, Void> tick = Task.builder("tick").interval(Duration.ofHours(1)).build();
        Task<String, Void> echo = Task.builder("echo", String.class).build();
        Task<String, Void> stranger = Task.builder("stranger", String.class).build();
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        BinomicConfig config = BinomicConfig.builder().broker(BrokerConfig.builder().maxPayloadBytes(16).build())
                .worker(fastWorker().build()).schedulePeriodicTasks(false).build();
        Binomic binomic = Binomic.builder().config(config).task(tick).task(echo).codec(new TextCodec()).broker(shared).build().start();
        opened.add(binomic);

        var periodic = assertThrows(IllegalArgumentException.class, () -> binomic.submit(tick));
        assertTrue(periodic.getMessage().contains("'tick' is an INTERVAL task"), periodic.getMessage());
        var large = assertThrows(PayloadTooLargeException.class, () -> binomic.submit(echo, "x".repeat(17)));
        assertEquals(17, large.size());
        var missing = assertThrows(IllegalArgumentException.class, () -> binomic.submit(echo, null));
        assertEquals("task 'echo' takes a java.lang.String, got null; pass an argument (an empty record if there is nothing to say)",
                missing.getMessage());
        @SuppressWarnings({"unchecked", "rawtypes"})
        Task<Object, ?> raw = (Task) echo;
        var wrongType = assertThrows(IllegalArgumentException.class, () -> binomic.submit(raw, 42));
        assertEquals("task 'echo' takes a java.lang.String, got a java.lang.Integer", wrongType.getMessage());
        assertEquals(0, binomic.queueStats("default").ready(), "nothing was enqueued");

        JobHandle<Void> accepted = binomic.submit(stranger, "x");
        assertEquals("default", accepted.queue());
        assertEquals(1, binomic.queueStats("default").ready(), "the unregistered task was enqueued");
        assertEquals(JobState.UNKNOWN, accepted.status().state(), "a Void task is not tracked");
        var noResult = assertThrows(IllegalStateException.class, accepted::result);
        assertTrue(noResult.getMessage().contains("not tracked"), noResult.getMessage());
        // What jobs.md says of await on such a handle: the same error, at once.
        var noAwait = assertThrows(IllegalStateException.class, () -> accepted.await(Duration.ofSeconds(5)));
        assertTrue(noAwait.getMessage().contains("not tracked"), noAwait.getMessage());

        Task<String, Void> other = Task.builder("other", String.class).build();
        Binomic worker = start(List.of(other.handledBy(s -> null)), TaskDefaults.defaults(), fastWorker().build(), shared);
        worker.startWorker();
        await("the unregistered task was dead-lettered", () -> worker.queueStats("default").deadLetters() == 1);
        DeadLetter letter = worker.deadLetters().list("default", DeadLetterFilter.all(), 10).getFirst();
        assertEquals(DeadLetterReason.TASK_NOT_FOUND, letter.failure().reason());
        assertEquals(accepted.id(), letter.message().orElseThrow().id());
        assertEquals("stranger", letter.message().orElseThrow().task());
    }

    @Test
    void staleMessageIsNotExecutedButRetriedWithAFreshEnqueueTime() throws Exception {
        List<Integer> ranAtAttempt = new CopyOnWriteArrayList<>();
        Task<String, Void> fresh = Task.builder("fresh-only", String.class).backoff(Backoff.fixed(Duration.ofMillis(50))).build();
        TaskBinding<String, Void> freshBinding = fresh.handledBy((String s) -> {
            ranAtAttempt.add(1);
            return null;
        });
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        TaskDefaults staleAfterOneMinute = TaskDefaults.builder().staleAfter(Duration.ofMinutes(1)).build();
        Binomic binomic = start(List.of(freshBinding), staleAfterOneMinute, fastWorker().build(), shared);
        Worker worker = binomic.startWorker();

        shared.enqueue(Message.fromWire(java.util.UUID.randomUUID(), "fresh-only", "default", 1,
                java.time.Instant.now().minus(Duration.ofHours(1)), "x".getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of()));

        await("ran once re-enqueued", () -> worker.counters().succeeded() == 1);
        assertEquals(1, ranAtAttempt.size(), "the stale delivery itself must not run");
        assertEquals(1, worker.counters().retried());
    }

    @Test
    void handlerSeesItsMessageIdAndAttemptThroughTaskContext() throws Exception {
        List<io.binomic.api.TaskContext> seen = new CopyOnWriteArrayList<>();
        Task<String, Void> contextual = Task.builder("contextual", String.class).backoff(Backoff.fixed(Duration.ofMillis(20))).build();
        TaskBinding<String, Void> contextualBinding = contextual.handledBy((String s) -> {
            seen.add(io.binomic.api.TaskContext.current());
            if (seen.size() == 1) {
                throw new IllegalStateException("once");
            }
            return null;
        });
        Binomic binomic = start(List.of(contextualBinding), TaskDefaults.defaults(), fastWorker().build());
        Worker worker = binomic.startWorker();

        JobHandle<Void> job = binomic.submit(contextual, "x", Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
        java.util.UUID id = job.id();
        assertEquals("default", job.queue());

        await("second attempt succeeded", () -> worker.counters().succeeded() == 1);
        assertEquals(List.of(1, 2), seen.stream().map(io.binomic.api.TaskContext::attempt).toList());
        assertTrue(seen.stream().allMatch(c -> c.messageId().equals(id)), "the id is stable across attempts");
        assertEquals("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", seen.get(1).headers().get("traceparent"));
        assertTrue(seen.get(1).maxAttempts() == 3 && !seen.get(1).isLastAttempt());
        assertTrue(io.binomic.api.TaskContext.find().isEmpty(), "no context outside a handler");
    }

    @Test
    void aControlLoopSurvivesAnUnexpectedErrorAndTheWorkerKeepsConsuming() throws Exception {
        AtomicInteger fetches = new AtomicInteger();
        Broker failingOnce = new ForwardingBroker(new MemoryBrokerProvider().create(BrokerConfig.defaults())) {
            @Override
            public List<io.binomic.api.spi.Delivery> fetch(List<String> queues, String consumer, int max, Duration wait)
                    throws InterruptedException {
                if (fetches.incrementAndGet() == 3) {
                    throw new StackOverflowError("injected: not an exception, so a catch of RuntimeException misses it");
                }
                return super.fetch(queues, consumer, max, wait);
            }
        };
        AtomicInteger ran = new AtomicInteger();
        Task<Integer, Void> count = Task.builder("count", Integer.class).build();
        TaskBinding<Integer, Void> countBinding = count.handledBy((Integer n) -> {
            ran.incrementAndGet();
            return null;
        });
        Binomic binomic = start(List.of(countBinding), TaskDefaults.defaults(), fastWorker().concurrency(2).build(), failingOnce);
        Worker worker = binomic.startWorker();
        await("the error was thrown", () -> fetches.get() > 3);

        for (int i = 0; i < 20; i++) {
            binomic.submit(count, i);
        }

        await("every task ran after the error", () -> ran.get() == 20);
        assertEquals(WorkerHealth.State.CONSUMING, worker.health().state(), worker.health().toString());
    }

    @Test
    void deliveriesLostWithAFailedFetchRunAtOnceAsTheirAttemptEvenWhileAnotherQueueCannotBeSearched() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean lostOne = new java.util.concurrent.atomic.AtomicBoolean();
        Broker losing = new ForwardingBroker(new MemoryBrokerProvider().create(BrokerConfig.defaults())) {
            @Override
            public List<io.binomic.api.spi.Delivery> fetch(List<String> queues, String consumer, int max, Duration wait)
                    throws InterruptedException {
                List<io.binomic.api.spi.Delivery> got = super.fetch(queues, consumer, max, wait);
                if (!got.isEmpty() && lostOne.compareAndSet(false, true)) {
                    // handed out, pending to this consumer, and the reply never arrives
                    throw new io.binomic.api.BrokerException("injected: the reply of a fetch was lost");
                }
                return got;
            }

            @Override
            public List<io.binomic.api.spi.Delivery> pendingOf(String queue, String consumer, int max) {
                if (queue.equals("broken")) {
                    throw new io.binomic.api.BrokerException("injected: WRONGTYPE on a key of queue 'broken'");
                }
                return super.pendingOf(queue, consumer, max);
            }
        };
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        Task<String, Void> good = Task.builder("good", String.class).queue("good").build();
        TaskBinding<String, Void> goodBinding = good.handledBy((String s) -> {
            attempts.merge(s, io.binomic.api.TaskContext.current().attempt(), (a, b) -> a * 100 + b);
            return null;
        });
        // Long, so that half of it (the bound below) holds on a loaded machine and still tells a rerun at once from one
        // that waited for the lease to lapse.
        Duration lease = Duration.ofSeconds(30);
        Binomic binomic = start(List.of(goodBinding), TaskDefaults.defaults(),
                fastWorker().queues("broken", "good").leaseTimeout(lease).build(), losing);
        binomic.startWorker();
        long submitted = System.nanoTime();
        binomic.submit(good, "lost");

        await("the lost delivery ran", () -> attempts.containsKey("lost"));
        assertTrue(lostOne.get(), "a fetch reply was lost");
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - submitted);
        assertTrue(tookMillis < lease.toMillis() / 2, "it waited " + tookMillis + " ms, as for its lease to lapse");
        assertEquals(Map.of("lost", 1), attempts, "it ran once, as the attempt it was handed out as");
    }

    @Test
    void aSearchForLostReadsRunsNoEntryThatIsNoLongerPendingUnderTheWorkerOnceItHoldsTheIntake() throws Exception {
        // The search reads the pending entries before it holds the intake; a fetch under way meanwhile parks some of
        // them (a limit's wait, a paused task), so that reading names entries no longer pending. Here the first reading
        // names one pending under another consumer; every later one tells the truth.
        Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        AtomicInteger readings = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<io.binomic.api.spi.Delivery> stale = new java.util.concurrent.atomic.AtomicReference<>();
        Broker staleOnce = new ForwardingBroker(memory) {
            @Override
            public List<io.binomic.api.spi.Delivery> pendingOf(String queue, String consumer, int max) {
                List<io.binomic.api.spi.Delivery> pending = super.pendingOf(queue, consumer, max);
                if (readings.incrementAndGet() == 1 && stale.get() != null) {
                    List<io.binomic.api.spi.Delivery> withStale = new java.util.ArrayList<>(pending);
                    withStale.add(stale.get());
                    return withStale;
                }
                return pending;
            }
        };
        Set<String> ran = ConcurrentHashMap.newKeySet();
        Task<String, Void> named = Task.builder("named", String.class).build();
        TaskBinding<String, Void> namedBinding = named.handledBy((String s) -> {
            ran.add(s);
            return null;
        });
        // searches every 100 ms; a lease long enough that no reclaim takes the other consumer's entry in this test
        Binomic binomic = start(List.of(namedBinding), TaskDefaults.defaults(),
                fastWorker().leaseTimeout(Duration.ofSeconds(60)).reclaimInterval(Duration.ofMillis(100)).build(), staleOnce);
        binomic.submit(named, "elsewhere");
        List<io.binomic.api.spi.Delivery> other = memory.fetch(List.of(named.queue()), "another-worker", 1, Duration.ZERO);
        assertEquals(1, other.size());
        stale.set(other.getFirst());
        binomic.submit(named, "mine");
        binomic.startWorker();

        await("its own job ran", () -> ran.contains("mine"));
        await("three searches after the stale one", () -> readings.get() >= 5);
        Thread.sleep(300); // what a search hands out runs on a thread of its own
        assertFalse(ran.contains("elsewhere"), "an entry no longer pending under this worker ran as a lost read");
    }

    /** A broker whose flow limits are another's: the test broker forwards everything else. */
    private static class LimitingBroker extends ForwardingBroker implements io.binomic.api.spi.FlowLimits {
        private final io.binomic.api.spi.FlowLimits limits;

        LimitingBroker(Broker delegate) {
            super(delegate);
            this.limits = delegate.capability(io.binomic.api.spi.FlowLimits.class).orElseThrow();
        }

        @Override
        public List<io.binomic.api.spi.Admission> admit(String consumer, List<io.binomic.api.spi.Admission.Request> requests) {
            return limits.admit(consumer, requests);
        }

        @Override
        public List<io.binomic.api.spi.Admission> admit(String consumer, List<io.binomic.api.spi.Admission.Request> requests,
                                                        Duration maxHold) {
            return limits.admit(consumer, requests, maxHold);
        }

        @Override
        public int slotsHeld(String queue, String limitId) { return limits.slotsHeld(queue, limitId); }

        @Override
        public Map<String, io.binomic.api.QueueLimits> queueLimits(List<String> queues) { return limits.queueLimits(queues); }

        @Override
        public void setQueueLimits(String queue, io.binomic.api.QueueLimits queueLimits) { limits.setQueueLimits(queue, queueLimits); }
    }

    /**
     * A search that finds a whole fetch of rate-limited deliveries while the only slot is busy puts to the limit only as many
     * as there are free slots; the others are admitted as slots free. Admitted at once, they got reserved starts that passed
     * while they waited for the slot, and gave them back. The test counts the deliveries of each admission rather than the
     * starts given back: a start reached later than its allowance (half the rate's interval, 25 ms here) is given back by
     * design, which a loaded machine's scheduling alone causes now and then.
     */
    @Test
    void rateLimitedDeliveriesOfALostReadFoundWhileTheSlotIsBusyArePutToTheLimitOnlyAsTheirSlotFrees() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean lostOne = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicInteger mostAdmittedAtOnce = new AtomicInteger();
        Broker losing = new LimitingBroker(new MemoryBrokerProvider().create(BrokerConfig.defaults())) {
            @Override
            public List<io.binomic.api.spi.Delivery> fetch(List<String> queues, String consumer, int max, Duration wait)
                    throws InterruptedException {
                if (!lostOne.get()) {
                    // one read hands out ten, pending to this consumer, and its reply never arrives
                    List<io.binomic.api.spi.Delivery> got = super.fetch(queues, consumer, 10, wait);
                    if (!got.isEmpty()) {
                        lostOne.set(true);
                        throw new io.binomic.api.BrokerException("injected: the reply of a fetch was lost");
                    }
                    return got;
                }
                return super.fetch(queues, consumer, max, wait);
            }

            @Override
            public List<io.binomic.api.spi.Admission> admit(String consumer, List<io.binomic.api.spi.Admission.Request> requests,
                                                            Duration maxHold) {
                mostAdmittedAtOnce.accumulateAndGet(requests.size(), Math::max);
                return super.admit(consumer, requests, maxHold);
            }

            @Override
            public List<io.binomic.api.spi.Admission> admit(String consumer, List<io.binomic.api.spi.Admission.Request> requests) {
                mostAdmittedAtOnce.accumulateAndGet(requests.size(), Math::max);
                return super.admit(consumer, requests);
            }
        };
        Map<Integer, Integer> runs = new ConcurrentHashMap<>();
        // 20/s, one start every 50 ms; each run takes longer, so a start reserved for one waiting for the slot passes
        Task<Integer, Void> limited = Task.builder("limited", Integer.class).rateLimit(io.binomic.api.RateLimit.perSecond(20)).build();
        TaskBinding<Integer, Void> binding = limited.handledBy((Integer n) -> {
            Thread.sleep(120);
            runs.merge(n, 1, Integer::sum);
            return null;
        });
        Binomic binomic = start(List.of(binding), TaskDefaults.defaults(),
                fastWorker().concurrency(1).leaseTimeout(Duration.ofSeconds(30)).build(), losing);
        for (int i = 0; i < 10; i++) {
            binomic.submit(limited, i);
        }
        binomic.startWorker();

        await("all ten ran", () -> runs.size() == 10);
        assertTrue(lostOne.get(), "a fetch reply was lost");
        assertEquals(1, mostAdmittedAtOnce.get(), "deliveries put to their limit in one admission by a worker of one slot");
        assertTrue(runs.values().stream().allMatch(c -> c == 1), "each ran once: " + runs);
    }

    @Test
    void aBrokerHandingOutMoreThanAskedNeverMakesTheWorkerRunMoreThanItsConcurrency() throws Exception {
        Broker greedy = new ForwardingBroker(new MemoryBrokerProvider().create(BrokerConfig.defaults())) {
            @Override
            public List<io.binomic.api.spi.Delivery> fetch(List<String> queues, String consumer, int max, Duration wait)
                    throws InterruptedException {
                return super.fetch(queues, consumer, max * 4, wait); // what XREADGROUP COUNT n over several streams did
            }
        };
        AtomicInteger runningNow = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        Map<Integer, Integer> runs = new ConcurrentHashMap<>();
        Task<Integer, Void> slow = Task.builder("slow", Integer.class).build();
        TaskBinding<Integer, Void> slowBinding = slow.handledBy((Integer n) -> {
            mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
            Thread.sleep(20);
            runningNow.decrementAndGet();
            runs.merge(n, 1, Integer::sum);
            return null;
        });
        Binomic binomic = start(List.of(slowBinding), TaskDefaults.defaults(), fastWorker().concurrency(2).build(), greedy);
        binomic.submitAll(slow, IntStream.range(0, 40).boxed().toList());

        binomic.startWorker();

        await("all 40 ran", () -> runs.size() == 40);
        assertTrue(mostAtOnce.get() <= 2, "ran " + mostAtOnce.get() + " at once with concurrency 2");
        runs.forEach((n, times) -> assertEquals(1, times, "task " + n + " ran " + times + " times"));
        await("nothing left pending", () -> binomic.queueStats("default").pending() == 0);
    }

    @Test
    void aWorkerOnTwoQueuesWithConcurrencyOneRunsEveryMessageOneAtATime() throws Exception {
        AtomicInteger runningNow = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        TaskHandlerCounting counting = new TaskHandlerCounting(runningNow, mostAtOnce, ran);
        Task<Integer, Void> mail = Task.builder("mail", Integer.class).queue("mail").build();
        TaskBinding<Integer, Void> mailBinding = mail.handledBy(counting::handle);
        Task<Integer, Void> payments = Task.builder("payment", Integer.class).queue("payments").build();
        TaskBinding<Integer, Void> paymentsBinding = payments.handledBy(counting::handle);
        Binomic binomic = start(List.of(mailBinding, paymentsBinding), TaskDefaults.defaults(),
                fastWorker().concurrency(1).queues("mail", "payments").build());
        binomic.submitAll(mail, IntStream.range(0, 10).boxed().toList());
        binomic.submitAll(payments, IntStream.range(0, 10).boxed().toList());

        binomic.startWorker();

        await("all 20 ran", () -> ran.get() == 20);
        assertEquals(1, mostAtOnce.get());
    }

    /** Counts runs and the most handlers running at once. */
    record TaskHandlerCounting(AtomicInteger runningNow, AtomicInteger mostAtOnce, AtomicInteger ran) {
        Void handle(Integer n) throws InterruptedException {
            mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
            Thread.sleep(5);
            runningNow.decrementAndGet();
            ran.incrementAndGet();
            return null;
        }
    }

    /**
     * A broker on which one worker's lease renewals never land, as if its control loops were frozen
     * while a handler still ran; if {@code reclaims} is false, that worker's reclaims find nothing either.
     */
    private static Broker renewalsLost(Broker shared, String consumer, boolean reclaims) {
        return new ForwardingBroker(shared) {
            @Override
            public List<io.binomic.api.spi.Delivery> renewLeasesReportingLost(String who, List<io.binomic.api.spi.Delivery> held) {
                return who.equals(consumer) ? List.of() : super.renewLeasesReportingLost(who, held);
            }

            @Override
            public List<io.binomic.api.spi.Delivery> reclaim(String queue, String who, Duration minIdle, int max) {
                return reclaims || !who.equals(consumer) ? super.reclaim(queue, who, minIdle, max) : List.of();
            }

            @Override
            public void close() {
                // shared with the other worker's instance
            }
        };
    }

    @Test
    void aLateFailureOfAWorkerWhoseDeliveryWasReclaimedIsStaleAndSchedulesNoRetry() throws Exception {
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger succeeded = new AtomicInteger();
        Task<Integer, Void> flaky = Task.builder("flaky", Integer.class).maxAttempts(3).build();
        TaskBinding<Integer, Void> flakyBinding = flaky.handledBy((Integer n) -> {
            if (runs.incrementAndGet() == 1) {
                Thread.sleep(1500); // the first run outlives its lease, which is not renewed...
                throw new IllegalStateException("...and then fails, long after another worker took the delivery over");
            }
            succeeded.incrementAndGet();
            return null;
        });
        WorkerConfig.Builder shortLease = fastWorker().leaseTimeout(Duration.ofMillis(300)).reclaimInterval(Duration.ofMillis(100));
        Binomic slow = start(List.of(flakyBinding), TaskDefaults.defaults(), shortLease.consumerName("slow").build(),
                renewalsLost(shared, "slow", false));
        Worker slowWorker = slow.startWorker();
        slow.submit(flaky, 1);
        await("the first run started", () -> runs.get() == 1);
        Binomic other = start(List.of(flakyBinding), TaskDefaults.defaults(), fastWorker().leaseTimeout(Duration.ofMillis(300))
                .reclaimInterval(Duration.ofMillis(100)).consumerName("other").build(), renewalsLost(shared, "slow", false));
        other.startWorker();

        await("the other worker ran it", () -> succeeded.get() == 1);
        await("the late failure was refused as stale", () -> slowWorker.counters().staleSettlements() == 1);
        QueueStats stats = shared.stats("default");
        assertEquals(0, stats.delayed(), "no retry scheduled by the late failure: " + stats);
        assertEquals(0, stats.deadLetters(), stats.toString());
        assertEquals(0, stats.pending(), stats.toString());
        assertEquals(2, runs.get());
        shared.close();
    }

    @Test
    void aWorkerThatReclaimsItsOwnRunningDeliveryDoesNotRunItTwiceAndStillSettlesIt() throws Exception {
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        AtomicInteger runs = new AtomicInteger();
        Task<Integer, Void> slow = Task.builder("slow", Integer.class).build();
        TaskBinding<Integer, Void> slowBinding = slow.handledBy((Integer n) -> {
            runs.incrementAndGet();
            Thread.sleep(1200); // four leases, never renewed: this worker's own reclaim takes it back
            return null;
        });
        Binomic binomic = start(List.of(slowBinding), TaskDefaults.defaults(), fastWorker().leaseTimeout(Duration.ofMillis(300))
                .reclaimInterval(Duration.ofMillis(100)).consumerName("alone").build(), renewalsLost(shared, "alone", true));
        Worker worker = binomic.startWorker();
        binomic.submit(slow, 1);

        await("it finished and was settled", () -> worker.counters().succeeded() == 1 && shared.stats("default").pending() == 0);
        Thread.sleep(500);
        assertEquals(1, runs.get(), "ran once, though reclaimed by its own worker while running");
        assertEquals(0, worker.counters().staleSettlements(), "settled at the delivery count of its own reclaim");
        shared.close();
    }

    @Test
    void aWorkerRefusesToStartOnAQueueWithADeclaredTaskItHasNoHandlerFor() {
        Task<String, Void> bound = Task.builder("bound", String.class).build();
        Task<String, Void> declared = Task.builder("elsewhere", String.class).queue("mail").build();
        BinomicConfig config = BinomicConfig.builder().worker(fastWorker().build()).build();
        Binomic binomic = Binomic.builder().config(config).handle(bound, s -> null).task(declared).codec(new TextCodec()).build().start();
        opened.add(binomic);

        var e = assertThrows(IllegalStateException.class, binomic::startWorker);
        assertTrue(e.getMessage().contains("no handler for task(s) [elsewhere (queue mail)]"), e.getMessage());
        Worker onItsOwnQueue = binomic.startWorker(fastWorker().queues("default").build());
        assertTrue(!onItsOwnQueue.isStopped(), "a worker that leaves the declared task's queue out starts");
    }

    @Test
    void aTaskBoundTwiceIsRejected() {
        Task<String, Void> t = Task.builder("twice", String.class).build();
        Binomic.Builder builder = Binomic.builder().handle(t, s -> null);
        var e = assertThrows(IllegalArgumentException.class, () -> builder.handle(t, s -> null));
        assertEquals("task 'twice' has two handlers bound; bind one", e.getMessage());
    }

    @Test
    void aTrackedTaskReturnsItsResultThroughItsHandle() throws Exception {
        Task<Integer, Integer> square = Task.builder("square", Integer.class, Integer.class).build();
        Binomic binomic = start(List.of(square.handledBy(n -> n * n)), TaskDefaults.defaults(), fastWorker().build());
        binomic.startWorker();

        JobHandle<Integer> job = binomic.submit(square, 7);
        List<JobHandle<Integer>> more = binomic.submitAll(square, List.of(2, 3));

        assertEquals(49, job.await(Duration.ofSeconds(20)));
        assertEquals(List.of(4, 9), more.stream().map(h -> h.await(Duration.ofSeconds(20))).toList());
        assertEquals(JobState.SUCCEEDED, job.status().state());
        assertEquals(1, job.status().attempt());
        assertEquals("square", job.status().task());
        assertEquals(job.id(), binomic.job(square, job.id()).id());
        assertEquals(49, binomic.job(square, job.id()).await(Duration.ofSeconds(1)));
    }
}
