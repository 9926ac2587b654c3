package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobUpdate;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A change made on the dashboard (a cancel, a replay, a pause) while the broker is down: the
 * operator is told at once that the broker failed or did not answer, and what became of the
 * change, as a page is, not an internal error after the client's retries (8-18 s on a frozen Redis).
 */
class DashboardChangesBrokerDownTest {
    private enum Mode { UP, FAILING, HANGING }

    private final Task<String, String> later = Task.builder("later", String.class, String.class).queue("changes").build();
    private final CountDownLatch thaw = new CountDownLatch(1);
    private volatile Mode mode = Mode.UP;
    private Binomic binomic;

    @AfterEach
    void close() {
        thaw.countDown();
        if (binomic != null) {
            binomic.close();
        }
    }

    private final class DownBroker extends ForwardingBroker {
        DownBroker() {
            super(new MemoryBrokerProvider().create(BrokerConfig.defaults()));
        }

        private void maybeDown() {
            switch (mode) {
                case UP -> { }
                case FAILING -> throw new BrokerException("Redis at 127.0.0.1:6379: no connection became ready; nothing was sent");
                case HANGING -> {
                    try {
                        thaw.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }

        @Override
        public Optional<JobRecord> readJob(String queue, UUID id) {
            maybeDown();
            return super.readJob(queue, id);
        }

        @Override
        public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
            maybeDown();
            return super.cancelJob(cancelled);
        }
    }

    @Test
    void aCancelWhileTheBrokerFailsOrHangsSaysSoAtOnceAndWhatBecameOfIt() throws Exception {
        DownBroker broker = new DownBroker();
        binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler()).task(later).build().start();
        JobHandle<String> job = binomic.submit(later, "x", SubmitOptions.builder().delay(Duration.ofHours(1)).build());
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            String page = DashboardMetricsTest.raw(base, "GET", "/jobs/" + job.id(), "");
            Matcher m = Pattern.compile("name=\"csrf\" value=\"([0-9a-f]+)\"").matcher(page);
            assertTrue(m.find(), page);
            String cancel = "csrf=" + m.group(1) + "&id=" + job.id();

            mode = Mode.FAILING;
            String failed = DashboardMetricsTest.raw(base, "POST", "/jobs/cancel", cancel);
            assertTrue(failed.startsWith("HTTP/1.1 503") && failed.contains("the broker failed the change: Redis at 127.0.0.1:6379:"
                    + " no connection became ready; nothing was sent") && failed.contains("try again once the broker answers"), failed);

            mode = Mode.HANGING;
            long t0 = System.nanoTime();
            String hung = DashboardMetricsTest.raw(base, "POST", "/jobs/cancel", cancel);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(hung.startsWith("HTTP/1.1 503") && hung.contains("did not answer within 3 s")
                    && hung.contains("it may still be made if the broker answers later"), hung);
            assertTrue(millis < 15_000, "answered after the page's deadline, not the broker's 20 s: " + millis + " ms");

            thaw.countDown();
            mode = Mode.UP;
            String done = DashboardMetricsTest.raw(base, "POST", "/jobs/cancel", cancel);
            assertTrue(done.startsWith("HTTP/1.1 303"), done);
        }
    }
}
