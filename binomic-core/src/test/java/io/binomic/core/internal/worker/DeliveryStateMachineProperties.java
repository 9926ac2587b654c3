package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.arbitrary;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import io.binomic.api.Backoff;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.NonRetryableException;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskDefaults;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.BrokerCapabilities;
import io.binomic.core.TextCodec;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.jobs.JobRecordFormat;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import io.binomic.core.internal.memory.MemorySchedulerProvider;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The invariants of DESIGN.md section 5, checked on the real {@link DeliveryProcessor} and the
 * in-memory broker for arbitrary sequences of handler outcomes: every message ends acked or
 * dead-lettered exactly once, runs at most maxAttempts times with attempts 1, 2, 3..., and none
 * is lost. Generated and shrunk by QuickTheories; a failure prints the seed to replay it with
 * {@code -DQT_SEED=...}.
 */
class DeliveryStateMachineProperties {

    enum Step { SUCCESS, RETRYABLE, NON_RETRYABLE, TIMEOUT, CANCELLED }

    /** One message's script: the outcome of each execution in turn, or a payload that cannot decode. */
    record Script(boolean undecodable, List<Step> steps) { }

    static Gen<List<Script>> scripts() {
        Gen<Script> one = integers().between(0, 9).map(n -> n == 0)
                .zip(lists().of(arbitrary().enumValues(Step.class)).ofSizeBetween(1, 8), Script::new);
        return lists().of(one).ofSizeBetween(1, 12);
    }

    /** Outcomes travel through the handler as exceptions the scripted invoker turns into what a real one throws. */
    static final class SimulatedTimeout extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    static final class SimulatedCancel extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    static final class ScriptedInvoker implements TaskInvoker {
        @Override
        public Object invoke(java.util.concurrent.Callable<?> call, Duration timeout)
                throws TimeoutException, ExecutionException, InterruptedException {
            try {
                return call.call();
            } catch (SimulatedTimeout e) {
                throw new TimeoutException("simulated");
            } catch (SimulatedCancel e) {
                throw new InterruptedException("simulated");
            } catch (Exception e) {
                throw new ExecutionException(e);
            }
        }

        @Override
        public String name() {
            return "scripted";
        }
    }

    /**
     * The messages here are not tracked (no {@link Message#TRACK} header): their records are never
     * written, and no cancel is ever asked for them.
     */
    static final JobTracking UNTRACKED = new JobTracking() {
        @Override
        public String worker() {
            throw new AssertionError("an untracked job has no record to name its worker in");
        }

        @Override
        public boolean start(JobUpdate started) {
            throw new AssertionError("an untracked job has no record to start: " + started);
        }

        @Override
        public void progress(JobUpdate progress) {
            throw new AssertionError("an untracked job has no record to report progress to: " + progress);
        }

        @Override
        public boolean cancelRequested(String receipt) {
            return false; // asked on every failure, tracked or not; only a tracked job can be cancelled
        }
    };

    @Test
    void everyMessageEndsAckedOrDeadLetteredExactlyOnceWithinItsAttemptBudget() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(300).forAll(scripts(), integers().between(1, 5)).checkAssert((scripts, maxAttempts) -> {
            cases.incrementAndGet();
            runScripts(scripts, maxAttempts, false);
        });
        assertTrue(cases.get() >= 250, "only " + cases.get() + " cases ran");
    }

    /**
     * The same invariants with every other message a tracked job ({@link Message#TRACK}): tracking
     * changes no outcome, and each tracked job's record ends in the state its message ended in
     * (SUCCEEDED when acked, DEAD_LETTERED with the same reason when dead-lettered).
     */
    @Test
    void trackedJobsEndAsTheirMessagesDoAndTheirRecordsSayHow() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(150).forAll(scripts(), integers().between(1, 5)).checkAssert((scripts, maxAttempts) -> {
            cases.incrementAndGet();
            runScripts(scripts, maxAttempts, true);
        });
        assertTrue(cases.get() >= 120, "only " + cases.get() + " cases ran");
    }

    /** What the worker runs: {@code binding} on {@code queue}, encoded as text. */
    private static WorkerTasks tasks(String queue, TaskBinding<?, ?> binding, TaskDefaults defaults) {
        return new WorkerTasks(List.of(queue), defaults, Map.of(binding.task().name(), binding), new TextCodec(),
                BrokerConfig.defaults().maxPayloadBytes());
    }

    private static void runScripts(List<Script> scripts, int maxAttempts, boolean trackSome) {
        String queue = "q";
        Map<String, Script> byKey = new HashMap<>();
        Map<String, Integer> cursor = new HashMap<>();
        Map<String, List<Integer>> executedAttempts = new HashMap<>();
        Map<String, Step> lastStep = new HashMap<>();
        Map<String, Integer> acked = new HashMap<>();
        Map<String, Integer> currentAttempt = new HashMap<>();

        Task<String, Void> task = Task.builder("scripted", String.class).queue(queue).build();
        TaskBinding<String, Void> binding = task.handledBy(key -> {
            executedAttempts.computeIfAbsent(key, k -> new ArrayList<>()).add(currentAttempt.get(key));
            List<Step> steps = byKey.get(key).steps();
            int i = cursor.merge(key, 1, Integer::sum) - 1;
            Step step = i < steps.size() ? steps.get(i) : Step.SUCCESS;
            lastStep.put(key, step);
            switch (step) {
                case SUCCESS -> { }
                case RETRYABLE -> throw new IllegalStateException("transient " + key);
                case NON_RETRYABLE -> throw new NonRetryableException("permanent " + key);
                case TIMEOUT -> throw new SimulatedTimeout();
                case CANCELLED -> throw new SimulatedCancel();
            }
            return null;
        });

        var broker = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        var scheduler = new MemorySchedulerProvider().create(broker);
        broker.start(List.of(queue));
        TaskDefaults defaults = TaskDefaults.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofMillis(1))).build();
        JobTracking tracking = trackSome ? JobTracking.through(broker, "worker", receipt -> false) : UNTRACKED;
        DeliveryProcessor processor = new DeliveryProcessor(tasks(queue, binding, defaults),
                new ScriptedInvoker(), Clock.systemUTC(), new StatsRecorder(), new Random(1), tracking);

        List<Message> messages = new ArrayList<>();
        Map<String, UUID> tracked = new HashMap<>();
        for (int i = 0; i < scripts.size(); i++) {
            String key = "m" + i;
            byKey.put(key, scripts.get(i));
            String payload = scripts.get(i).undecodable() ? "!" + key : key;
            Map<String, String> headers = trackSome && i % 2 == 0 ? Map.of("key", key, Message.TRACK, "3600000") : Map.of("key", key);
            Message message = Message.fromWire(UUID.randomUUID(), task.name(), queue, 1, Instant.now(),
                    payload.getBytes(StandardCharsets.UTF_8), headers);
            if (message.isTracked()) {
                tracked.put(key, message.id());
            }
            messages.add(message);
        }
        broker.enqueueAll(messages);

        Instant farFuture = Instant.now().plus(Duration.ofDays(1));
        for (int round = 0; round < 1000; round++) {
            scheduler.moveDue(queue, farFuture, 10_000);
            String consumer = "worker-a";
            List<Delivery> deliveries = fetch(broker, queue, consumer);
            if (deliveries.isEmpty()) {
                // Cancelled deliveries stay pending; another worker reclaims them as the next attempt.
                consumer = "worker-b";
                deliveries = broker.reclaim(queue, consumer, Duration.ZERO, 10_000);
            }
            if (deliveries.isEmpty()) {
                break;
            }
            for (Delivery d : deliveries) {
                currentAttempt.put(d.message().orElseThrow().userHeaders().get("key"), d.attempt());
                Outcome outcome = processor.process(d);
                Thread.interrupted(); // a simulated cancellation re-asserts the interrupt flag
                if (outcome instanceof Outcome.Settle(var settlement)) {
                    assertTrue(broker.settle(consumer, List.of(settlement)).allApplied(), "the owner's settlement is always applied");
                    if (settlement instanceof Settlement.Ack) {
                        acked.merge(d.message().orElseThrow().userHeaders().get("key"), 1, Integer::sum);
                    }
                }
            }
        }

        QueueStats end = broker.stats(queue);
        assertEquals(0, end.ready() + end.pending() + end.delayed(), "nothing may be left in flight: " + end);
        Map<String, DeadLetter> dead = new HashMap<>();
        for (DeadLetter letter : BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10_000)) {
            String key = letter.message().orElseThrow().userHeaders().get("key");
            assertTrue(dead.put(key, letter) == null, "dead-lettered twice: " + key);
        }
        for (String key : byKey.keySet()) {
            int ackedTimes = acked.getOrDefault(key, 0);
            boolean deadLettered = dead.containsKey(key);
            assertEquals(1, ackedTimes + (deadLettered ? 1 : 0), key + " must end exactly once (acked " + ackedTimes + ", dlq " + deadLettered + ")");
            List<Integer> attempts = executedAttempts.getOrDefault(key, List.of());
            assertTrue(attempts.size() <= maxAttempts, key + " ran " + attempts.size() + " times, budget " + maxAttempts);
            for (int i = 0; i < attempts.size(); i++) {
                assertEquals(i + 1, attempts.get(i), key + " attempts must be 1, 2, 3...: " + attempts);
            }
            Script script = byKey.get(key);
            if (tracked.containsKey(key)) {
                UUID id = tracked.get(key);
                JobStatus status = JobRecordFormat.read(queue, id, BrokerCapabilities.jobStore(broker).readJob(queue, id).orElse(JobRecord.NONE));
                if (deadLettered) {
                    assertEquals(JobState.DEAD_LETTERED, status.state(), key + " steps " + script.steps() + ": " + status);
                    assertEquals(dead.get(key).failure().reason(), status.deadLetterReason().orElseThrow(), key + ": " + status);
                } else {
                    assertEquals(JobState.SUCCEEDED, status.state(), key + " steps " + script.steps() + ": " + status);
                }
                if (!attempts.isEmpty()) {
                    assertEquals(attempts.getLast(), status.attempt(), key + " steps " + script.steps() + ": " + status);
                }
            }
            if (script.undecodable()) {
                assertTrue(attempts.isEmpty());
                assertEquals(DeadLetterReason.DECODE_ERROR, dead.get(key).failure().reason());
            } else if (ackedTimes == 1) {
                assertEquals(Step.SUCCESS, lastStep.get(key));
            } else {
                DeadLetterReason expected = lastStep.get(key) == Step.NON_RETRYABLE
                        ? DeadLetterReason.NON_RETRYABLE : DeadLetterReason.MAX_ATTEMPTS;
                assertEquals(expected, dead.get(key).failure().reason(), key + " steps " + script.steps());
            }
        }
    }

    /**
     * A message queued as an attempt beyond the budget (maxAttempts lowered since its retry, or an
     * entry written by another tool) is dead-lettered without running, for that reason: not as a
     * lease that expired, which is what a reclaimed one over the budget is.
     */
    @Test
    void aMessageQueuedBeyondItsBudgetIsDeadLetteredForThatAndAReclaimedOneForItsLease() {
        Task<String, Void> task = Task.builder("budget", String.class).queue("q").build();
        AtomicInteger runs = new AtomicInteger();
        TaskBinding<String, Void> binding = task.handledBy(s -> {
            runs.incrementAndGet();
            return null;
        });
        DeliveryProcessor processor = new DeliveryProcessor(tasks("q", binding, TaskDefaults.builder().maxAttempts(3).build()),
                new ScriptedInvoker(), Clock.systemUTC(), new StatsRecorder(), new Random(1), UNTRACKED);
        Message queuedAsFifth = Message.fromWire(UUID.randomUUID(), task.name(), "q", 5, Instant.now(),
                "x".getBytes(StandardCharsets.UTF_8), Map.of());

        Outcome first = processor.process(Delivery.of("q", "1-0", queuedAsFifth, 1));
        Outcome reclaimed = processor.process(Delivery.of("q", "1-0", queuedAsFifth.withAttempt(3, Instant.now()), 2));

        assertEquals(0, runs.get(), "neither ran");
        DeadLetter.Failure budget = ((Settlement.DeadLetter) ((Outcome.Settle) first).settlement()).failure();
        assertEquals(DeadLetterReason.MAX_ATTEMPTS, budget.reason());
        assertEquals("io.binomic.AttemptBudgetSpent", budget.errorClass());
        assertTrue(budget.errorMessage().startsWith("queued as attempt 5 but task 'budget' allows 3"), budget.errorMessage());
        DeadLetter.Failure lease = ((Settlement.DeadLetter) ((Outcome.Settle) reclaimed).settlement()).failure();
        assertEquals("io.binomic.LeaseExpired", lease.errorClass());
    }

    private static List<Delivery> fetch(io.binomic.api.spi.Broker broker, String queue, String consumer) {
        try {
            return broker.fetch(List.of(queue), consumer, 10_000, Duration.ofMillis(1));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void backoffGrowsMonotonicallyAndNeverPassesItsCap() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(200).forAll(integers().between(1, 10_000), integers().between(100, 400), integers().between(0, 100_000))
                .checkAssert((baseMillis, factorPercent, extraCapMillis) -> {
                    cases.incrementAndGet();
                    backoffIsMonotonicAndCapped(baseMillis, factorPercent, extraCapMillis);
                });
        assertTrue(cases.get() >= 190, "only " + cases.get() + " cases ran");
    }

    private static void backoffIsMonotonicAndCapped(int baseMillis, int factorPercent, int extraCapMillis) {
        Backoff backoff = Backoff.exponential(Duration.ofMillis(baseMillis), factorPercent / 100.0,
                Duration.ofMillis(baseMillis + (long) extraCapMillis));
        Duration previous = Duration.ZERO;
        for (int attempt = 1; attempt <= 60; attempt++) {
            Duration d = backoff.delay(attempt);
            assertTrue(d.compareTo(previous) >= 0, "attempt " + attempt + ": " + d + " < " + previous);
            assertTrue(d.compareTo(backoff.cap()) <= 0, "attempt " + attempt + ": " + d + " over cap " + backoff.cap());
            previous = d;
        }
        assertEquals(Duration.ofMillis(baseMillis), backoff.delay(1));
    }
}
