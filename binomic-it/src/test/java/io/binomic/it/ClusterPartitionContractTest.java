package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.JobHandle;
import io.binomic.core.Binomic;
import io.binomic.core.PartitionContractTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Partitioned queues on a Redis Cluster of 3 masters and 3 replicas, configured by URL as a user
 * would: the whole partition contract, plus the point of it, one queue's work landing on several
 * masters. No command may be refused with {@code CROSSSLOT} (counted in {@code INFO errorstats} of
 * every node, over the whole class).
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterPartitionContractTest extends PartitionContractTest {
    @Override
    protected String brokerUrl() {
        return RedisClusterSet.shared().url();
    }

    @Test
    void onePartitionedQueuesJobsLandOnSeveralMastersAndAllRun() {
        RedisClusterSet cluster = RedisClusterSet.shared();
        Binomic binomic = started(8);
        int partitions = 12;
        binomic.queues().setPartitions(queue(), partitions);
        List<JobHandle<String>> jobs = submit(binomic, 0, 120);
        Map<String, Long> readyByMaster = new TreeMap<>();
        for (int i = 0; i < partitions; i++) {
            String partition = i == 0 ? queue() : queue() + "@" + i;
            String stream = "binomic:{" + partition + "}:stream";
            RedisClusterSet.Node master = cluster.masterOf(stream);
            readyByMaster.merge(master.toString(), (Long) cluster.call(master, "XLEN", stream), Long::sum);
        }
        assertEquals(120, readyByMaster.values().stream().mapToLong(Long::longValue).sum(), readyByMaster.toString());
        // 12 hash tags over 3 masters all on one: odds of 3 in 3^12 for a random queue name
        assertTrue(readyByMaster.size() >= 2, "the queue's partitions are on more than one master: " + readyByMaster);
        binomic.startWorker();
        for (JobHandle<String> j : jobs) {
            j.await(Duration.ofSeconds(30));
        }
        assertEquals(120, handled.size());
    }
}
