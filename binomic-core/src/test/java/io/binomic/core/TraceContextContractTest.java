package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.NonRetryableException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.TraceContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Message;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A W3C trace context given at submit, or taken from the application's provider, reaches the
 * handler unchanged on every attempt and after a replay, the same on every broker.
 */
public abstract class TraceContextContractTest {

    record Step(int n) { }

    /** What a handler saw on one execution. */
    record Seen(int attempt, Optional<TraceContext> trace, String replayedFrom) { }

    static final TraceContext GIVEN = TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "congo=t61rcWkgMzE");
    static final TraceContext AMBIENT = TraceContext.of("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");

    protected TraceContextContractTest() {
    }

    /** The broker URL the instances use. */
    protected abstract String brokerUrl();

    private final String queue = "trace-" + UUID.randomUUID().toString().substring(0, 8);
    /** Fails its first attempt (retryable), so the second shows what a retry carries. */
    private final Task<Step, String> flaky = Task.builder("flaky", Step.class, String.class).queue(queue)
            .maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(20))).build();
    /** Dead-letters unless replayed, so the replay shows what a redriven message carries. */
    private final Task<Step, String> doomed = Task.builder("doomed", Step.class, String.class).queue(queue).maxAttempts(1).build();
    private final BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic started(io.binomic.api.spi.TraceContextProvider provider) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(brokerUrl())
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic binomic = Binomic.builder().config(config).traceContextProvider(provider)
                .handle(flaky, s -> {
                    TaskContext ctx = TaskContext.current();
                    seen.add(new Seen(ctx.attempt(), ctx.traceContext(), ctx.headers().get(Message.REPLAYED_FROM)));
                    if (ctx.attempt() == 1) {
                        throw new IllegalStateException("first attempt fails");
                    }
                    return "ok";
                })
                .handle(doomed, s -> {
                    TaskContext ctx = TaskContext.current();
                    seen.add(new Seen(ctx.attempt(), ctx.traceContext(), ctx.headers().get(Message.REPLAYED_FROM)));
                    if (ctx.headers().get(Message.REPLAYED_FROM) == null) {
                        throw new NonRetryableException("dead-letter it");
                    }
                    return "replayed";
                })
                .build().start();
        opened.add(binomic);
        binomic.startWorker();
        return binomic;
    }

    private Seen next() throws InterruptedException {
        Seen s = seen.poll(20, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("the handler did not run within 20 s");
        }
        return s;
    }

    @Test
    void aTraceparentGivenAtSubmitReachesTheHandlerOnEveryAttempt() throws Exception {
        Binomic binomic = started(null);
        binomic.submit(flaky, new Step(1), SubmitOptions.builder().traceContext(GIVEN).build());
        Seen first = next();
        Seen second = next();
        assertEquals(1, first.attempt());
        assertEquals(Optional.of(GIVEN), first.trace());
        assertEquals(2, second.attempt(), "the retry ran");
        assertEquals(Optional.of(GIVEN), second.trace(), "the retry carries the submit's trace context");
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", second.trace().orElseThrow().traceId());
        assertEquals("00f067aa0ba902b7", second.trace().orElseThrow().parentId());
    }

    @Test
    void aTraceparentHeaderAtSubmitSurvivesDeadLetteringAndReplay() throws Exception {
        Binomic binomic = started(null);
        binomic.submit(doomed, new Step(2), SubmitOptions.builder().headers(GIVEN.headers()).build());
        Seen failed = next();
        assertEquals(Optional.of(GIVEN), failed.trace());
        DeadLetter letter = awaitDeadLetter(binomic);
        assertEquals(GIVEN.traceparent(), letter.message().orElseThrow().wireHeaders().get(TraceContext.TRACEPARENT),
                "the dead letter keeps the trace context");
        assertTrue(binomic.deadLetters().replayOne(queue, letter.id()));
        Seen replayed = next();
        assertEquals(letter.id(), replayed.replayedFrom());
        assertEquals(Optional.of(GIVEN), replayed.trace(), "the replay carries the original trace context");
    }

    @Test
    void theProvidersContextIsUsedOnlyWhenTheSubmitNamesNone() throws Exception {
        Binomic binomic = started(() -> Optional.of(AMBIENT));
        binomic.submit(doomed, new Step(3));
        assertEquals(Optional.of(AMBIENT), next().trace(), "taken from the submitting thread's context");
        binomic.submit(doomed, new Step(4), SubmitOptions.builder().traceContext(GIVEN).build());
        assertEquals(Optional.of(GIVEN), next().trace(), "the submit's own wins");
        binomic.submit(doomed, new Step(5), SubmitOptions.builder().headers(Map.of(TraceContext.TRACEPARENT, GIVEN.traceparent())).build());
        assertEquals(Optional.of(TraceContext.of(GIVEN.traceparent())), next().trace(), "a header given at submit wins too");
    }

    @Test
    void aSubmitWithoutTraceContextCarriesNone() throws Exception {
        Binomic binomic = started(Optional::empty);
        binomic.submit(doomed, new Step(6));
        Seen s = next();
        assertFalse(s.trace().isPresent());
    }

    private DeadLetter awaitDeadLetter(Binomic binomic) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            List<DeadLetter> letters = binomic.deadLetters().list(queue, DeadLetterFilter.all(), 10);
            if (!letters.isEmpty()) {
                return letters.getFirst();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no dead letter within 20 s");
    }
}
