package io.binomic.testsupport;

import io.binomic.api.QueueLimits;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.FlowLimits;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A broker with flow limits that counts the deliveries its admission calls let run (to run now or at a reserved
 * start): a test of a limit tells by it how many admissions its jobs needed, whatever the time they took.
 */
public final class AdmissionCountingBroker extends ForwardingBroker implements FlowLimits {
    private final FlowLimits limits;
    private final AtomicInteger admitted = new AtomicInteger();

    /** {@code delegate} must offer {@link FlowLimits}. */
    public AdmissionCountingBroker(Broker delegate) {
        super(delegate);
        this.limits = delegate.capability(FlowLimits.class)
                .orElseThrow(() -> new IllegalArgumentException("the broker has no flow limits to count the admissions of"));
    }

    /** The deliveries admitted to run (decisions {@code RUN} and {@code HOLD}) so far. */
    public int admitted() { return admitted.get(); }

    private List<Admission> counted(List<Admission> decisions) {
        for (Admission a : decisions) {
            if (a.decision() == Admission.Decision.RUN || a.decision() == Admission.Decision.HOLD) {
                admitted.incrementAndGet();
            }
        }
        return decisions;
    }

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests) {
        return counted(limits.admit(consumer, requests));
    }

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
        return counted(limits.admit(consumer, requests, maxHold));
    }

    @Override
    public int slotsHeld(String queue, String limitId) { return limits.slotsHeld(queue, limitId); }

    @Override
    public Map<String, QueueLimits> queueLimits(List<String> queues) { return limits.queueLimits(queues); }

    @Override
    public void setQueueLimits(String queue, QueueLimits queueLimits) { limits.setQueueLimits(queue, queueLimits); }
}
