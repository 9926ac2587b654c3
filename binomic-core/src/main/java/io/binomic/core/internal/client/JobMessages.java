package io.binomic.core.internal.client;

import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.TraceContextProvider;
import io.binomic.core.internal.ReservedHeaders;
import io.binomic.core.internal.Uuid7;
import io.binomic.core.internal.codec.ArgumentTypes;
import io.binomic.core.internal.codec.JsonText;
import io.binomic.core.internal.worker.FlowLimiter;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Validates a submit's options and builds its message: payload, codec, tracking, priority,
 * trace context and limit key. Every submit (typed, JSON, periodic tick) builds its message here,
 * so a rule about headers holds for all of them; sending it is {@link Submitter}'s.
 */
public final class JobMessages {
    private final PayloadCodec codec;
    private final int maxPayloadBytes;
    private final Clock clock;
    /** Gives a submit without a traceparent the submitting thread's trace context; null when the application has none. */
    private final TraceContextProvider traceContexts;

    public JobMessages(PayloadCodec codec, int maxPayloadBytes, Clock clock, TraceContextProvider traceContexts) {
        this.codec = codec;
        this.maxPayloadBytes = maxPayloadBytes;
        this.clock = clock;
        this.traceContexts = traceContexts;
    }

    /**
     * The trace context to add to a submit's headers: the one its options name, else none when its
     * headers carry a traceparent already, else the provider's. Asked once per submit call.
     */
    TraceContext traceFor(SubmitOptions options, Task<?, ?> task, int jobs, UUID messageId) {
        if (options.traceContext().isPresent()) {
            return options.traceContext().get();
        }
        if (traceContexts == null || options.headers().containsKey(TraceContext.TRACEPARENT)) {
            return null;
        }
        return traceContexts.forSubmit(new TraceContextProvider.Submit(task.name(), task.queue(), jobs, Optional.ofNullable(messageId)))
                .orElse(null);
    }

    /** A new message id, for a submit that names it to its trace context before the message is built. */
    UUID newId() { return Uuid7.next(clock); }

    /** The message of one job of {@code task} with {@code argument}, encoded by this client's codec; {@code id} null for a new one. */
    Message ofArgument(Task<?, ?> task, Object argument, SubmitOptions options, TraceContext trace, UUID id) {
        ReservedHeaders.refuse(options);
        requireArgumentFits(task, argument);
        ArgumentTypes.requireDecodable(task, codec.id());
        return build(task, argument, codec.encode(argument), options, trace, id);
    }

    /**
     * The messages of one submit call, one per argument, in order. The first is built with every
     * check of {@link #ofArgument}; what depends only on the task and the options (reserved
     * headers, priority, decodable type, trace context, retention) then holds for the others, which
     * are built from it with their own argument checks, payload and id, each message validated once
     * by its builder.
     */
    List<Message> ofArguments(Task<?, ?> task, Collection<?> arguments, SubmitOptions options, TraceContext trace) {
        List<Message> built = new ArrayList<>(arguments.size());
        Message first = null;
        for (Object argument : arguments) {
            if (first == null) {
                first = ofArgument(task, argument, options, trace, null);
                built.add(first);
                continue;
            }
            requireArgumentFits(task, argument);
            byte[] payload = codec.encode(argument);
            requireFits(task, payload);
            built.add(first.toBuilder().id(Uuid7.next(clock)).enqueuedAt(clock.instant()).payload(payload)
                    .limitKey(FlowLimiter.limitKeyOf(task, argument).orElse(null))
                    .build());
        }
        return built;
    }

    /** The message of one job of {@code definition} whose argument is JSON text ({@code null} for none), with the message id {@code id}. */
    Message ofJson(Task<?, ?> definition, String jsonArgument, SubmitOptions options, TraceContext trace, UUID id) {
        ReservedHeaders.refuse(options);
        byte[] payload;
        if (jsonArgument == null) {
            payload = codec.encode(null);
        } else {
            JsonText.requireJson(jsonArgument);
            payload = jsonArgument.getBytes(StandardCharsets.UTF_8);
        }
        return build(definition, null, payload, options, trace, id);
    }

    /**
     * The argument of {@code task} that {@code jsonArgument} stands for, decoded by this client's
     * codec as a worker would decode it; refused naming the task and its argument type when it
     * does not decode (a worker would dead-letter it).
     */
    <A> A argumentOfJson(Task<A, ?> task, String jsonArgument) {
        if (jsonArgument != null) {
            JsonText.requireJson(jsonArgument);
        }
        if (task.hasNoArgument()) {
            if (jsonArgument != null && !jsonArgument.isBlank() && !jsonArgument.strip().equals("null")) {
                throw new IllegalArgumentException("task '" + task.name() + "' takes no argument, got JSON " + brief(jsonArgument)
                        + "; leave the argument out");
            }
            return null;
        }
        if (jsonArgument == null) {
            throw new IllegalArgumentException("task '" + task.name() + "' takes a " + task.argumentType().getName()
                    + ", got no JSON argument; give one (--json in the CLI)");
        }
        try {
            return codec.decode(jsonArgument.getBytes(StandardCharsets.UTF_8), task.argumentType());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("task '" + task.name() + "' takes a " + task.argumentType().getName() + ", and JSON "
                    + brief(jsonArgument) + " does not decode to one (" + e.getMessage() + "); a worker would dead-letter it as"
                    + " DECODE_ERROR. Give JSON that decodes to " + task.argumentType().getSimpleName(), e);
        }
    }

    private static String brief(String json) {
        return json.length() <= 80 ? json : json.substring(0, 77) + "...";
    }

    private Message build(Task<?, ?> task, Object argument, byte[] payload, SubmitOptions options, TraceContext trace, UUID id) {
        requireFits(task, payload);
        int priority = ReservedHeaders.priorityOf(task, options); // refuses the header among the caller's
        Map<String, String> headers = options.headers();
        return Message.builder().id(id != null ? id : Uuid7.next(clock)).task(task.name()).queue(task.queue()).enqueuedAt(clock.instant())
                .payload(payload).codec(codec.id()).priority(priority)
                .trackFor(task.isTracked() ? task.statusRetention() : null)
                .traceContext(trace != null ? trace : TraceContext.fromHeaders(headers).orElse(null))
                .limitKey(FlowLimiter.limitKeyOf(task, argument).orElse(null))
                .headers(ReservedHeaders.userHeaders(headers))
                .build();
    }

    private void requireFits(Task<?, ?> task, byte[] payload) {
        if (payload.length > maxPayloadBytes) {
            throw new PayloadTooLargeException(task.name(), payload.length, maxPayloadBytes);
        }
    }

    /**
     * Refuses at submit what could only fail in the worker: a missing argument, or one of another
     * type (possible through raw types), would otherwise be retried to the dead-letter queue.
     */
    private static void requireArgumentFits(Task<?, ?> task, Object argument) {
        if (task.hasNoArgument()) {
            if (argument != null) {
                throw new IllegalArgumentException("task '" + task.name() + "' takes no argument, got a "
                        + argument.getClass().getName() + "; submit it with submit(task)");
            }
        } else if (argument == null) {
            throw new IllegalArgumentException("task '" + task.name() + "' takes a " + task.argumentType().getName()
                    + ", got null; pass an argument (an empty record if there is nothing to say)");
        } else if (!task.argumentType().isInstance(argument)) {
            throw new IllegalArgumentException("task '" + task.name() + "' takes a " + task.argumentType().getName()
                    + ", got a " + argument.getClass().getName());
        }
    }
}
