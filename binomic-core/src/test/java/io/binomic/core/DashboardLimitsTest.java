package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.web.Promtool;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A queue's flow limits show on the queues page and on {@code /metrics}: the queue's own and those its
 * tasks declare, worded as {@code binomic queue limit} words them, with the slots in use and the jobs
 * waiting for a slot or for the rate; a limit per key shows what it allows.
 */
class DashboardLimitsTest {
    record Job(String tenant) { }

    private static final String QUEUE = "limited";
    private final Task<Job, Void> work = Task.builder("work", Job.class).queue(QUEUE).concurrencyLimit(1)
            .limitKey(Job::tenant).rateLimitPerKey(RateLimit.perSecond(5)).build();
    private final Task<Job, Void> other = Task.builder("other", Job.class).queue(QUEUE).build();
    private final Binomic binomic = Binomic.builder().handle(work, j -> null).handle(other, j -> null).build().start();

    @AfterEach
    void close() {
        binomic.close();
    }

    private static Message message(String task) {
        return Message.fromWire(UUID.randomUUID(), task, QUEUE, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{\"tenant\":\"acme\"}".getBytes(StandardCharsets.UTF_8), Map.of("codec", "json-jdk"));
    }

    /**
     * Two jobs of {@code work} and three of {@code other} decided on in one call: the first of each
     * runs, the second {@code work} waits for the task's one slot, the last two {@code other} wait for
     * the queue's rate of one start per 10 s.
     */
    private void twoRunningOneWaitingForASlotTwoForTheRate() throws InterruptedException {
        binomic.queues().setLimits(QUEUE, QueueLimits.builder().rateLimit(RateLimit.of(1, Duration.ofSeconds(10))).concurrencyLimit(5).build());
        Broker broker = CoreAccess.get().broker(binomic);
        for (String task : List.of("work", "work", "other", "other", "other")) {
            broker.enqueue(message(task));
        }
        List<Delivery> fetched = new ArrayList<>();
        for (int round = 0; round < 20 && fetched.size() < 5; round++) {
            fetched.addAll(broker.fetch(List.of(QUEUE), "c1", 5 - fetched.size(), Duration.ofMillis(100)));
        }
        List<FlowLimit> queueLimits = List.of(FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, RateLimit.of(1, Duration.ofSeconds(10))),
                FlowLimit.concurrency(FlowLimit.QUEUE_LIMIT_ID, 5));
        List<Admission.Request> requests = fetched.stream().map(d -> {
            List<FlowLimit> limits = new ArrayList<>(queueLimits);
            if (d.message().orElseThrow().task().equals("work")) {
                limits.add(FlowLimit.concurrency("t:work", 1));
            }
            return new Admission.Request(d, limits);
        }).toList();
        List<Admission.Decision> decisions = broker.capability(io.binomic.api.spi.FlowLimits.class).orElseThrow().admit("c1", requests)
                .stream().map(Admission::decision).toList();
        assertEquals(List.of(Admission.Decision.RUN, Admission.Decision.WAIT_SLOT, Admission.Decision.RUN, Admission.Decision.WAIT_RATE,
                Admission.Decision.WAIT_RATE), decisions);
    }

    /**
     * A limit's series the broker did not answer for are absent from {@code /metrics}, as a queue's depth is, and
     * {@code binomic_broker_up} says 0. They were absent with the broker up at 1: an alert or a rate() on them went
     * quiet without a sign. Whole outage: every series of the broker absent, broker_up 0, what this process counts kept.
     */
    @Test
    void aLimitTheBrokerDoesNotAnswerForIsAbsentAndTheBrokerIsNotUp() throws Exception {
        boolean[] statesDown = {false};
        boolean[] allDown = {false};
        Broker memory = new io.binomic.core.internal.memory.MemoryBrokerProvider().create(io.binomic.api.BrokerConfig.defaults());
        ForwardingBroker broker = new ForwardingBroker(memory) {
            @Override
            public io.binomic.api.QueueStats stats(String queue) {
                if (allDown[0]) {
                    throw new IllegalStateException("connection refused");
                }
                return super.stats(queue);
            }

            @Override
            public <T> java.util.Optional<T> capability(Class<T> type) {
                if (type == io.binomic.api.spi.FlowLimits.class) {
                    return memory.capability(type);
                }
                if (type != FlowLimitReadings.class) {
                    return super.capability(type);
                }
                FlowLimitReadings real = memory.capability(FlowLimitReadings.class).orElseThrow();
                FlowLimitReadings readings = (queue, ids) -> {
                    if (statesDown[0] || allDown[0]) {
                        throw new IllegalStateException("connection refused");
                    }
                    return real.read(queue, ids);
                };
                return java.util.Optional.of(type.cast(readings));
            }
        };
        try (Binomic down = Binomic.builder().broker(broker).scheduler(broker.scheduler()).handle(work, j -> null).build().start();
             Dashboard dashboard = down.dashboard().port(0).start()) {
            String up = DashboardMetricsTest.get(dashboard.uri().resolve("metrics"), null);
            assertTrue(up.contains("\nbinomic_broker_up 1\n")
                    && up.contains("binomic_queue_limit_slots_in_use{queue=\"limited\",limit=\"task:work\"} 0"), up);

            statesDown[0] = true;
            String noStates = DashboardMetricsTest.get(dashboard.uri().resolve("metrics"), null);
            assertTrue(noStates.contains("\nbinomic_broker_up 0\n"), "a state not read is a broker not up: " + noStates);
            assertFalse(noStates.contains("binomic_queue_limit_slots_in_use{"), noStates);
            assertTrue(noStates.contains("binomic_queue_limit_concurrency{queue=\"limited\",limit=\"task:work\"} 1"),
                    "what the limit allows was read: " + noStates);

            allDown[0] = true;
            String outage = DashboardMetricsTest.get(dashboard.uri().resolve("metrics"), null);
            assertTrue(outage.startsWith("200 ") && outage.contains("\nbinomic_broker_up 0\n"), outage);
            assertFalse(outage.contains("binomic_queue_limit_") || outage.contains("binomic_queue_messages{"),
                    "no series of the broker, as for a queue's depth: " + outage);
        }
    }

    @Test
    void metricsGiveEachLimitWithItsSlotsInUseAndItsWaitersAndPassPromtool() throws Exception {
        twoRunningOneWaitingForASlotTwoForTheRate();
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            String response = DashboardMetricsTest.get(dashboard.uri().resolve("metrics"), null);
            assertTrue(response.startsWith("200 "), response);
            String text = response.substring(4);
            for (String line : List.of(
                    "binomic_queue_limit_concurrency{queue=\"limited\",limit=\"queue\"} 5",
                    "binomic_queue_limit_rate{queue=\"limited\",limit=\"queue\"} 0.1",
                    "binomic_queue_limit_slots_in_use{queue=\"limited\",limit=\"queue\"} 2",
                    "binomic_queue_limit_waiting{queue=\"limited\",limit=\"queue\",waiting=\"slot\"} 0",
                    "binomic_queue_limit_waiting{queue=\"limited\",limit=\"queue\",waiting=\"rate\"} 2",
                    "binomic_queue_limit_concurrency{queue=\"limited\",limit=\"task:work\"} 1",
                    "binomic_queue_limit_slots_in_use{queue=\"limited\",limit=\"task:work\"} 1",
                    "binomic_queue_limit_waiting{queue=\"limited\",limit=\"task:work\",waiting=\"slot\"} 1",
                    "binomic_queue_limit_rate{queue=\"limited\",limit=\"task:work:per-key\"} 5")) {
                assertTrue(text.lines().anyMatch(line::equals), "missing line " + line + " in\n" + text);
            }
            assertFalse(text.contains("limit=\"task:other"), "a task without limits has no series: " + text);
            assertFalse(text.contains("binomic_queue_limit_slots_in_use{queue=\"limited\",limit=\"task:work:per-key\""),
                    "a limit per key has a state per key, not one to show: " + text);
            Promtool.assertValid(text);
        }
    }

    @Test
    void theQueuesPageShowsEachLimitAsTheCliWordsItWithWhatItHolds() throws Exception {
        twoRunningOneWaitingForASlotTwoForTheRate();
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            String page = DashboardMetricsTest.get(dashboard.uri().resolve("queues"), null);
            assertTrue(page.startsWith("200 "), page);
            assertTrue(page.contains("<tr data-queue=\"limited\" data-limit=\"queue\"><td>limited</td><td>queue</td><td class=\"setting\">"
                    + binomic.queues().limits(QUEUE) + "</td><td class=\"in-use\">2 of 5</td><td class=\"waiting-slot\">0</td>"
                    + "<td class=\"waiting-rate\">2</td></tr>"), page);
            assertTrue(page.contains("<td class=\"setting\">concurrency 1</td><td class=\"in-use\">1 of 1</td>"
                    + "<td class=\"waiting-slot\">1</td><td class=\"waiting-rate\">-</td>"), page);
            assertTrue(page.contains("data-limit=\"task:work:per-key\"><td>limited</td><td>task:work:per-key</td><td class=\"setting\">"
                    + "rate 5 per PT1S (burst 1)</td><td class=\"in-use\">-</td><td class=\"waiting-slot\">-</td>"
                    + "<td class=\"waiting-rate\">per key</td>"), page);
        }
    }

    @Test
    void aClientWithoutLimitsShowsNoLimitSeriesAndSaysSoOnTheQueuesPage() throws Exception {
        try (Binomic plain = Binomic.builder().handle(Task.builder("plain", Job.class).queue("unlimited").build(), j -> null).build().start();
             Dashboard dashboard = plain.dashboard().port(0).start()) {
            assertFalse(DashboardMetricsTest.get(dashboard.uri().resolve("metrics"), null).contains("binomic_queue_limit"));
            assertTrue(DashboardMetricsTest.get(dashboard.uri().resolve("queues"), null).contains("id=\"no-limits\""));
        }
    }
}
