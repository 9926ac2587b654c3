package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.core.BrokerCapabilities;
import io.binomic.core.JobStoreContractTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The job-record contract, run against a real Redis. */
class RedisJobStoreContractTest extends JobStoreContractTest {

    private static final int JOBS = 20;

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    /**
     * A first start, whose record has none of the fields its update deletes, reads the record once (its state, its
     * cancel mark and those fields in one HMGET) and writes it once: no HGET, no HDEL. Counted as the commands Redis
     * ran (INFO commandstats): reading the state and the mark apart and deleting blindly is {@value #JOBS} HDEL and
     * twice as many HGET.
     */
    @Test
    void aFirstStartReadsItsRecordOnceAndDeletesNothing() throws Exception {
        List<JobUpdate> starts = new ArrayList<>();
        for (int i = 0; i < JOBS; i++) {
            Message m = trackedMessage("t", 60_000);
            broker.enqueue(m);
            starts.add(new JobUpdate(queue, m.id(), Map.of(JobRecords.STATE, "RUNNING", "attempt", "1"),
                    List.of(JobRecords.DUE, "progress", "note"), Duration.ZERO, false));
        }
        fetch(JOBS);
        long hget = calls("hget");
        long hmget = calls("hmget");
        long hdel = calls("hdel");
        long hset = calls("hset");

        assertEquals(Set.of(), BrokerCapabilities.jobStore(broker).startJobs(starts));

        assertEquals(0, calls("hget") - hget, "HGET calls");
        assertEquals(0, calls("hdel") - hdel, "HDEL calls");
        assertEquals(JOBS, calls("hmget") - hmget, "HMGET calls");
        assertEquals(JOBS, calls("hset") - hset, "HSET calls");
        for (JobUpdate start : starts) {
            assertEquals("RUNNING", BrokerCapabilities.jobStore(broker).readJob(queue, start.id()).orElseThrow().get(JobRecords.STATE));
        }
    }

    private static long calls(String command) {
        String stats = String.valueOf(RedisServer.shared().call("INFO", "commandstats"));
        String key = "cmdstat_" + command + ":calls=";
        int from = stats.indexOf(key);
        return from < 0 ? 0 : Long.parseLong(stats.substring(from + key.length(), stats.indexOf(',', from)));
    }
}
