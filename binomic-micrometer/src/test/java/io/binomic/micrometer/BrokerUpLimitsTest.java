package io.binomic.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.core.Binomic;
import io.binomic.testsupport.ForwardingBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * {@code binomic.broker.up} says 0 when a scrape read a queue's depth but not its flow limits, as
 * {@code /metrics} does: a limit's gauges that go NaN without the broker said down would leave an
 * alert on them quiet without a sign.
 */
class BrokerUpLimitsTest {
    static final Task<String, Void> HOLD = Task.builder("hold", String.class).queue("limited").concurrencyLimit(1).build();

    /** Past the reading's freshness, so the next read of a gauge is the broker's now. */
    private static final long FRESH_MILLIS = 600;

    @Test
    void theBrokerIsNotUpWhileTheStateOrTheSettingOfALimitIsNotRead() throws Exception {
        // A named module loads only the services it declares it uses; these are for this test alone.
        BrokerUpLimitsTest.class.getModule().addUses(BrokerProvider.class).addUses(SchedulerProvider.class);
        Broker memory = ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.schemes().contains("memory")).findFirst().orElseThrow().create(BrokerConfig.defaults());
        Scheduler scheduler = ServiceLoader.load(SchedulerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.brokerType().isInstance(memory)).findFirst().orElseThrow().create(memory);
        LimitsDown broker = new LimitsDown(memory);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Binomic binomic = Binomic.builder().broker(broker).scheduler(scheduler).task(HOLD).build().start();
             BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binder.bindTo(registry);
            binomic.queues().setLimits("limited", QueueLimits.builder().concurrencyLimit(5).build());
            Thread.sleep(FRESH_MILLIS);
            assertEquals(1, up(registry), "every read answered");
            assertEquals(0, slotsInUse(registry), "the task's limit was read");

            broker.statesDown = true;
            Thread.sleep(FRESH_MILLIS);
            assertEquals(0, up(registry), "the depth was read, what the limits hold was not");
            assertEquals(0, registry.get("binomic.queue.messages").tags("queue", "limited", "state", "ready").gauge().value(),
                    "the queue's depth was read");
            assertTrue(Double.isNaN(slotsInUse(registry)), "what the limit holds is unknown");

            broker.statesDown = false;
            broker.settingsDown = true;
            Thread.sleep(FRESH_MILLIS);
            assertEquals(0, up(registry), "the depth was read, the queue's limits were not");

            broker.settingsDown = false;
            Thread.sleep(FRESH_MILLIS);
            assertEquals(1, up(registry), "every read answers again");
        } finally {
            memory.close();
        }
    }

    private static double up(SimpleMeterRegistry registry) {
        return registry.get("binomic.broker.up").gauge().value();
    }

    private static double slotsInUse(SimpleMeterRegistry registry) {
        return registry.get("binomic.queue.limit.slots.in.use").tags("queue", "limited", "limit", "task:hold").gauge().value();
    }

    /**
     * The memory broker, whose reads of limits fail when told: their state ({@link FlowLimitReadings})
     * or a queue's own setting ({@link FlowLimits#queueLimits}), while a queue's depth is still read.
     */
    private static final class LimitsDown extends ForwardingBroker {
        volatile boolean statesDown;
        volatile boolean settingsDown;

        LimitsDown(Broker delegate) {
            super(delegate);
        }

        @Override
        public <T> Optional<T> capability(Class<T> type) {
            Optional<T> real = super.capability(type);
            if (type == FlowLimitReadings.class && real.isPresent()) {
                FlowLimitReadings readings = (FlowLimitReadings) real.get();
                FlowLimitReadings failing = (queue, ids) -> {
                    if (statesDown) {
                        throw new IllegalStateException("connection reset while reading the limits' state");
                    }
                    return readings.read(queue, ids);
                };
                return Optional.of(type.cast(failing));
            }
            if (type == FlowLimits.class && real.isPresent()) {
                FlowLimits limits = (FlowLimits) real.get();
                return Optional.of(type.cast(new SettingsDown(limits, this)));
            }
            return real;
        }

        @Override public void close() { }
    }

    /** Flow limits whose read of a queue's own fails while {@link LimitsDown#settingsDown}. */
    private record SettingsDown(FlowLimits delegate, LimitsDown broker) implements FlowLimits {
        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests) { return delegate.admit(consumer, requests); }

        @Override
        public List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
            return delegate.admit(consumer, requests, maxHold);
        }

        @Override public int slotsHeld(String queue, String limitId) { return delegate.slotsHeld(queue, limitId); }

        @Override
        public Map<String, QueueLimits> queueLimits(List<String> queues) {
            if (broker.settingsDown) {
                throw new IllegalStateException("connection reset while reading the queues' limits");
            }
            return delegate.queueLimits(queues);
        }

        @Override public void setQueueLimits(String queue, QueueLimits limits) { delegate.setQueueLimits(queue, limits); }
    }
}
