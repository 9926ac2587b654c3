package io.binomic.core.internal.web;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import io.binomic.api.TaskLimits;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimitReadings.Reading;
import io.binomic.api.spi.FlowLimits;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CoreAccess;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The flow limits of a queue as an operator watches them: the queue's own ({@code binomic queue
 * limit}), and those the tasks this process knows declare in code, each with what it holds now
 * where the broker can tell ({@link FlowLimitReadings}), for the queues page and {@code /metrics}.
 * A limit per key has a state per key, which only a scan could add up: it shows what it allows, not
 * what it holds.
 */
public final class LimitReadings {

    /**
     * One limit of a queue.
     *
     * @param queue the queue
     * @param name {@code queue} for the queue's own limits, {@code task:<name>} for a task's,
     *     {@code task:<name>:per-key} for those each key of a task has
     * @param limits what it allows, worded as {@code binomic queue limit} words a queue's
     * @param slotsInUse slots of its concurrency limit in use now, when it has one and the broker told
     * @param state what it holds now; empty for a limit per key, or when the broker cannot tell
     * @param error why the state could not be read, or null
     */
    public record Limit(String queue, String name, QueueLimits limits, long slotsInUse, Optional<Reading> state, String error) {
        /** Starts per second its rate limit allows, if it has one. */
        public Optional<Double> ratePerSecond() {
            return limits.rate().map(r -> r.permits() * 1e9 / r.period().toNanos());
        }
    }

    private LimitReadings() { }

    /**
     * The limits of {@code queue}: its own first, then its tasks' by name, each with its state read in
     * one round trip for all. {@code pending} counts the queue's deliveries not settled (read only
     * when it has a concurrency limit of its own: a broker may admit under it without a slot while it
     * cannot bind, and every such delivery is pending). A broker that fails the read leaves the limits
     * shown, with the error in place of their state.
     */
    public static List<Limit> read(Binomic binomic, String queue, LongSupplier pending) {
        Broker broker = CoreAccess.get().broker(binomic);
        Optional<FlowLimits> flowLimits = broker.capability(FlowLimits.class);
        if (flowLimits.isEmpty()) {
            return List.of();
        }
        record Declared(String name, String id, QueueLimits limits) { }
        List<Declared> declared = new ArrayList<>();
        QueueLimits own = flowLimits.get().queueLimits(List.of(queue)).getOrDefault(queue, QueueLimits.NONE);
        if (!own.isEmpty()) {
            declared.add(new Declared("queue", FlowLimit.QUEUE_LIMIT_ID, own));
        }
        for (Task<?, ?> t : binomic.tasks().all().stream().filter(t -> t.queue().equals(queue))
                .sorted(Comparator.comparing(Task::name)).toList()) {
            TaskLimits<?> l = t.limits();
            QueueLimits whole = limits(l.rate(), l.concurrency().orElse(0));
            if (!whole.isEmpty()) {
                declared.add(new Declared("task:" + t.name(), "t:" + t.name(), whole));
            }
            QueueLimits perKey = limits(l.rateLimitPerKey(), l.concurrencyLimitPerKey().orElse(0));
            if (l.hasKey() && !perKey.isEmpty()) {
                declared.add(new Declared("task:" + t.name() + ":per-key", null, perKey));
            }
        }
        if (declared.isEmpty()) {
            return List.of();
        }
        Map<String, Reading> states = Map.of();
        String error = null;
        Optional<FlowLimitReadings> readings = broker.capability(FlowLimitReadings.class);
        long queuePending = 0;
        try {
            if (readings.isPresent()) {
                states = readings.get().read(queue, declared.stream().map(Declared::id).filter(Objects::nonNull).toList());
            }
            queuePending = own.concurrency().isPresent() ? pending.getAsLong() : 0;
        } catch (RuntimeException e) {
            error = String.valueOf(e.getMessage());
        }
        List<Limit> out = new ArrayList<>(declared.size());
        for (Declared d : declared) {
            Optional<Reading> state = d.id() == null ? Optional.empty() : Optional.ofNullable(states.get(d.id()));
            long inUse = state.map(Reading::slotsHeld).orElse(0L);
            if (d.id() != null && d.id().equals(FlowLimit.QUEUE_LIMIT_ID)) {
                inUse = Math.max(inUse, queuePending);
            }
            out.add(new Limit(queue, d.name(), d.limits(), inUse, state, d.id() == null ? null : error));
        }
        return out;
    }

    /** Whether the broker answered every read of {@code limits}: a limit whose state it failed to read has an error. */
    public static boolean answered(List<Limit> limits) {
        return limits.stream().allMatch(l -> l.error() == null);
    }

    private static QueueLimits limits(Optional<RateLimit> rate, int concurrency) {
        QueueLimits.Builder b = QueueLimits.builder();
        rate.ifPresent(b::rateLimit);
        if (concurrency > 0) {
            b.concurrencyLimit(concurrency);
        }
        return b.build();
    }

    private static final String WHICH = " Label limit: queue for the queue's own limits (binomic queue limit), task:<name> for a"
            + " task's, task:<name>:per-key for each key of a task's (the tasks this process knows).";

    /** The gauges of limits, by name, with their help texts: {@code /metrics} writes them, the Micrometer binder binds them. */
    public static final Map<String, String> GAUGES;

    static {
        // In the order /metrics declares them.
        Map<String, String> gauges = new LinkedHashMap<>();
        gauges.put("binomic_queue_limit_concurrency", "Slots of a concurrency limit: jobs it lets run at once." + WHICH);
        gauges.put("binomic_queue_limit_rate", "Starts per second a rate limit allows, on average (its burst apart)." + WHICH);
        gauges.put("binomic_queue_limit_slots_in_use", "Slots of a concurrency limit held now, by running or held jobs."
                + " Not for limits per key." + WHICH);
        gauges.put("binomic_queue_limit_waiting", "Jobs waiting for a limit: waiting=slot in the delayed set for a slot"
                + " of its concurrency limit, waiting=rate for their start under its rate limit, held by a worker or parked (the starts"
                + " and turns it handed out that have not come; starts taken at once from its burst count for an interval)."
                + " Not for limits per key." + WHICH);
        GAUGES = Collections.unmodifiableMap(gauges);
    }

    /**
     * One value of a gauge of {@link #GAUGES}.
     *
     * @param gauge its name, a key of {@link #GAUGES}
     * @param waiting the label {@code waiting} ({@code slot} or {@code rate}) of {@code binomic_queue_limit_waiting}, else null
     */
    public record Sample(String gauge, String queue, String limit, String waiting, double value) { }

    /**
     * The values {@code limits} have: what a limit allows always, what it holds only where its state
     * was read (never for a limit per key, nor when the broker failed the read or cannot tell).
     */
    public static List<Sample> samples(List<Limit> limits) {
        List<Sample> out = new ArrayList<>();
        for (Limit l : limits) {
            l.limits().concurrency().ifPresent(c -> out.add(new Sample("binomic_queue_limit_concurrency", l.queue(), l.name(), null, c)));
            l.ratePerSecond().ifPresent(r -> out.add(new Sample("binomic_queue_limit_rate", l.queue(), l.name(), null, r)));
            l.state().ifPresent(s -> {
                if (l.limits().concurrency().isPresent()) {
                    out.add(new Sample("binomic_queue_limit_slots_in_use", l.queue(), l.name(), null, l.slotsInUse()));
                    out.add(new Sample("binomic_queue_limit_waiting", l.queue(), l.name(), "slot", s.waitingForSlot()));
                }
                if (l.limits().rate().isPresent()) {
                    out.add(new Sample("binomic_queue_limit_waiting", l.queue(), l.name(), "rate", s.waitingForRate()));
                }
            });
        }
        return out;
    }

    /** The series of {@code limits}; nothing when no queue has a limit, so a client without limits shows no empty families. */
    static void metrics(PrometheusText p, List<Limit> limits) {
        if (limits.isEmpty()) {
            return;
        }
        GAUGES.forEach((name, help) -> p.family(name, "gauge", help));
        for (Sample s : samples(limits)) {
            if (s.waiting() == null) {
                p.sample(s.gauge(), s.value(), "queue", s.queue(), "limit", s.limit());
            } else {
                p.sample(s.gauge(), s.value(), "queue", s.queue(), "limit", s.limit(), "waiting", s.waiting());
            }
        }
    }

    /** The queues page's section: every limit of every queue, or a line saying there is none. */
    static void section(Html h, List<Limit> limits) {
        h.raw("<section><h2>Flow limits</h2>");
        if (limits.isEmpty()) {
            h.raw("<p class=\"hint\" id=\"no-limits\">No queue has a rate or concurrency limit ('binomic queue limit'), and no task this"
                    + " process knows declares one.</p></section>");
            return;
        }
        h.raw("<table id=\"limits\" data-live=\"5000\">")
                .head("queue", "limit", "limits", "slots in use", "waiting for a slot", "waiting for the rate").raw("<tbody>");
        for (Limit l : limits) {
            h.raw("<tr data-queue=\"").text(l.queue()).raw("\" data-limit=\"").text(l.name()).raw("\"><td>").text(l.queue())
                    .raw("</td><td>").text(l.name()).raw("</td><td class=\"setting\">").text(l.limits());
            if (l.error() != null) {
                h.raw("</td><td class=\"error\" colspan=\"3\">").text("cannot read their state: " + l.error()).raw("</td></tr>\n");
                continue;
            }
            boolean concurrency = l.limits().concurrency().isPresent();
            boolean rate = l.limits().rate().isPresent();
            String none = l.state().isEmpty() && l.name().endsWith(":per-key") ? "per key" : "-";
            h.raw("</td><td class=\"in-use\">").text(l.state().isPresent() && concurrency ? l.slotsInUse() + " of "
                            + l.limits().concurrency().get() : concurrency ? none : "-")
                    .raw("</td><td class=\"waiting-slot\">").text(l.state().isPresent() && concurrency ? l.state().get().waitingForSlot()
                            : concurrency ? none : "-")
                    .raw("</td><td class=\"waiting-rate\">").text(l.state().isPresent() && rate ? l.state().get().waitingForRate()
                            : rate ? none : "-")
                    .raw("</td></tr>\n");
        }
        h.raw("</tbody></table><p class=\"hint\">Limits hold across every worker. A job over one waits in the delayed set (the"
                + " overview counts it as delayed) without using an attempt; a limit per key (a tenant, a partner) is counted for each key, so"
                + " only what it allows shows here. Waiting for the rate counts the starts and turns the limit handed out that have not"
                + " come: the jobs held by a worker until their start, or parked until their turn."
                + "</p></section>");
    }
}
