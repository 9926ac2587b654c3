package io.binomic.bench;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.testsupport.ForwardingBroker;
import java.time.Duration;
import java.util.List;

/**
 * The bench's view into a worker's broker calls ({@link BenchBatchesWorker}): it forwards every call
 * and notes, in epoch µs ({@link BenchWorker#nowMicros}), when the last settle call holding a batch
 * child's outcome began and ended, and when the fetch that returned a callback began and returned. The
 * callback lag then splits into the last child's outcome waiting for its settle call, that call, the
 * fetch picking the callback up, and the hand-off to its handler.
 */
final class TimingBroker extends ForwardingBroker {
    private final String childTask;
    private final String callbackTask;
    volatile long childSettleStart;
    volatile long childSettleEnd;
    volatile int childSettleSize;
    /** Whether a settle call was under way, and when it began, at the moment the last child ended (set by the handler). */
    private volatile long settleSince;
    volatile long callbackFetchStart;
    volatile long callbackFetchEnd;

    TimingBroker(Broker delegate, String childTask, String callbackTask) {
        super(delegate);
        this.childTask = childTask;
        this.callbackTask = callbackTask;
    }

    /** The end of the last settle call holding a child, once it has ended (the callback may start before), at most 5 s. */
    long childSettleEnded() throws InterruptedException {
        for (int i = 0; i < 5000 && childSettleEnd == 0; i++) {
            Thread.sleep(1);
        }
        return childSettleEnd;
    }

    /** When the settle call under way began, or 0 when none is. */
    long settleUnderWaySince() { return settleSince; }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) {
        long start = BenchWorker.nowMicros();
        settleSince = start;
        boolean children = settlements.stream().anyMatch(s -> is(s.delivery(), childTask));
        if (children) {
            // noted before the call: the callback it enqueues may start before its reply is read
            childSettleEnd = 0;
            childSettleSize = settlements.size();
            childSettleStart = start;
        }
        try {
            return delegate.settle(consumer, settlements);
        } finally {
            settleSince = 0;
            if (children) {
                childSettleEnd = BenchWorker.nowMicros();
            }
        }
    }

    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        long start = BenchWorker.nowMicros();
        List<Delivery> got = delegate.fetch(queues, consumer, max, wait);
        if (got.stream().anyMatch(d -> is(d, callbackTask))) {
            callbackFetchStart = start;
            callbackFetchEnd = BenchWorker.nowMicros();
        }
        return got;
    }

    private static boolean is(Delivery d, String task) { return d.message().map(Message::task).filter(task::equals).isPresent(); }
}
