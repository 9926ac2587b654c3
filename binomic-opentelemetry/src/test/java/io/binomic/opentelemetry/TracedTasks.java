package io.binomic.opentelemetry;

import io.binomic.api.Backoff;
import io.binomic.api.spi.Message;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.core.Binomic;
import java.time.Duration;

/** The tasks of the tracing tests, shared by the submitting test and its worker JVM. */
final class TracedTasks {
    static final String QUEUE = "traced";

    /** Fails its first attempt, succeeds on the second: two runs of one job. */
    static final Task<String, String> FLAKY = Task.builder("flaky", String.class, String.class).queue(QUEUE)
            .maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100))).keepStatusFor(Duration.ofHours(1)).build();

    /** Fails for good unless it is a replay: a dead letter, then a run of its replay. */
    static final Task<String, String> DOOMED = Task.builder("doomed", String.class, String.class).queue(QUEUE)
            .maxAttempts(1).keepStatusFor(Duration.ofHours(1)).build();

    private TracedTasks() { }

    static Binomic.Builder handlers(Binomic.Builder builder) {
        return builder
                .handle(FLAKY, s -> {
                    if (TaskContext.current().attempt() == 1) {
                        throw new IllegalStateException("first attempt of " + s + " fails");
                    }
                    return s.toUpperCase();
                })
                .handle(DOOMED, s -> {
                    if (!TaskContext.current().headers().containsKey(Message.REPLAYED_FROM)) {
                        throw new IllegalStateException(s + " fails until it is replayed");
                    }
                    return "replayed " + s;
                });
    }
}
