package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.internal.process.Master;
import io.binomic.core.internal.process.MasterConfig;
import io.binomic.core.internal.process.MasterEvent;
import io.binomic.it.RedisClusterSet;
import io.binomic.it.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end on a Redis Cluster of 3 masters and 3 replicas, configured as a user would: a producer
 * through a {@code redis+cluster://} URL, {@code binomic master} workers through a Redisson YAML file
 * (broker option {@code redisson.config}, which must reach the worker JVMs), three queues whose
 * slots are on three different masters, and the CLI ({@code job submit}, {@code job show},
 * {@code queues}, {@code dlq list}) through both. A worker JVM is SIGKILLed mid-run: it is replaced and
 * every job completes. No command is refused with {@code CROSSSLOT}.
 */
class ClusterMasterAndCliTest {
    private static final int JOBS_PER_QUEUE = 40;

    @TempDir
    Path dir;

    @Test
    void masterWorkersProducersAndTheCliShareQueuesSpreadOverTheMasters() throws Exception {
        RedisClusterSet cluster = RedisClusterSet.shared();
        RedisServer ledgers = RedisServer.shared();
        long crossSlotBefore = cluster.errors("CROSSSLOT");
        Map<RedisClusterSet.Node, String> queueOfMaster = queuesOnEveryMaster(cluster, "e2e-" + UUID.randomUUID().toString().substring(0, 6));
        List<String> queues = List.copyOf(queueOfMaster.values());
        Map<String, Ledger> ledgerOf = new LinkedHashMap<>();
        queues.forEach(q -> ledgerOf.put(q, new Ledger(ledgers.host(), ledgers.port(), q)));
        Map<RedisClusterSet.Node, Long> readsBefore = new HashMap<>();
        queueOfMaster.keySet().forEach(m -> readsBefore.put(m, cluster.calls(m, "xreadgroup")));

        Path yaml = cluster.writeRedissonYaml();
        BrokerConfig broker = BrokerConfig.builder().url("redis://cluster").options(Map.of("redisson.config", yaml.toString())).build();
        Path conf = dir.resolve("binomic.conf");
        Files.writeString(conf, "broker.url = redis://cluster\nbroker.option.redisson.config = " + yaml + "\n");

        List<MasterEvent> events = new CopyOnWriteArrayList<>();
        BinomicConfig producerConfig = BinomicConfig.builder().brokerUrl(cluster.url()).schedulePeriodicTasks(false).build();
        try (Binomic producer = Binomic.builder().config(producerConfig).build().start();
             Master master = new Master(MasterConfig.builder().broker(broker).queues(queues).workers(2).concurrency(6)
                     .heartbeatInterval(Duration.ofMillis(200)).heartbeatTimeout(Duration.ofSeconds(2))
                     .startTimeout(Duration.ofSeconds(40)).shutdownGrace(Duration.ofSeconds(3)).killGrace(Duration.ofMillis(300))
                     .leaseTimeout(Duration.ofSeconds(2)).reclaimInterval(Duration.ofMillis(500))
                     .stateDirectory(dir.resolve("state"))
                     .jvmOptions(List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                             "-D" + ProcessJobs.LEDGER_PROPERTY + "="
                                     + ledgerOf.values().stream().map(Ledger::spec).collect(Collectors.joining(";"))))
                     .build(), events::add).start()) {
            for (String q : queues) {
                producer.submitAll(ProcessJobs.jobOn(q),
                        IntStream.range(0, JOBS_PER_QUEUE).mapToObj(n -> new ProcessJobs.Job(n, 150)).toList());
            }
            // A worker JVM SIGKILLed mid-run: the master replaces it, and what it held comes back through reclaim.
            Fixture.await("10 jobs done", events::toString, () -> ledgerOf.values().stream().mapToInt(l -> l.doneJobs().size()).sum() >= 10);
            // On a loaded machine slot 0 may still be starting when slot 1 has run 10: kill it once it runs.
            Fixture.await("slot 0 running", events::toString, () -> events.stream()
                    .anyMatch(e -> e instanceof MasterEvent.Running r && r.slot() == 0));
            long victim = master.slots().slot(0).pid();
            Fixture.signal(victim, "KILL");
            Set<Integer> all = IntStream.range(0, JOBS_PER_QUEUE).boxed().collect(Collectors.toSet());
            for (String q : queues) {
                Fixture.await("every job of " + q + " done", () -> "done " + ledgerOf.get(q).doneJobs().size() + ", events " + events,
                        () -> ledgerOf.get(q).doneJobs().equals(all));
            }
            // A job the killed JVM ran without its ack reaching Redis is done in the ledger, yet pending
            // until reclaim takes it (a lease after the kill) and runs it again: wait for those too.
            for (String q : queues) {
                Fixture.await("nothing pending on " + q, () -> producer.queueStats(q).toString(),
                        () -> producer.queueStats(q).pending() == 0 && producer.queueStats(q).ready() == 0);
            }

            // The CLI: a tracked job by name (URL), a misfit that is dead-lettered, the job's record, the queues.
            String first = queues.getFirst();
            CliRun ok = CliRun.of("job", "submit", "--broker", cluster.url(), "--task", ProcessJobs.TASK + "-" + first,
                    "--queue", first, "--json", "{\"n\":1000,\"sleepMillis\":1}", "--wait", "30s");
            assertEquals(0, ok.exit(), ok.toString());
            UUID id = UUID.fromString(ok.out().split("\n")[0]);
            CliRun misfit = CliRun.of("job", "submit", "--config", conf.toString(), "--task", ProcessJobs.TASK + "-" + first,
                    "--queue", first, "--json", "{\"nope\":1}", "--wait", "30s");
            assertEquals(1, misfit.exit(), misfit.toString());
            assertTrue(misfit.out().contains("DEAD_LETTERED"), misfit.toString());

            CliRun shown = CliRun.of("job", "show", "--broker", cluster.url(), "--id", id.toString(), "--queue", first);
            assertEquals(0, shown.exit(), shown.toString());
            assertTrue(shown.out().contains("state    SUCCEEDED\n"), shown.out());

            CliRun listed = CliRun.of("queues", "--config", conf.toString(), "--queues", String.join(",", queues));
            assertEquals(0, listed.exit(), listed.toString());
            String[] lines = listed.out().split("\n");
            assertEquals(4, lines.length, listed.out());
            for (String q : queues) {
                int dead = q.equals(first) ? 1 : 0;
                assertTrue(listed.out().lines().anyMatch(l -> l.matches(q + " +0 +0 +0 +0 +" + dead + " +\\d+ +- +-")), listed.out());
            }
            CliRun dlq = CliRun.of("dlq", "list", "--broker", cluster.url(), "--queues", String.join(",", queues));
            assertEquals(0, dlq.exit(), dlq.toString());
            assertTrue(dlq.out().endsWith("1 dead letter(s)\n"), dlq.out());
            Fixture.await("the killed worker replaced", events::toString,
                    () -> events.stream().anyMatch(e -> e instanceof MasterEvent.Replaced r && r.oldPid() == victim));
            assertTrue(events.stream().anyMatch(e -> e instanceof MasterEvent.Replaced r && r.oldPid() == victim),
                    "the killed worker was replaced: " + events);
        }
        // Every master served reads: the three queues really were spread over the cluster.
        for (var e : queueOfMaster.entrySet()) {
            assertTrue(cluster.calls(e.getKey(), "xreadgroup") > readsBefore.get(e.getKey()), "no reads on " + e.getKey());
        }
        assertEquals(crossSlotBefore, cluster.errors("CROSSSLOT"), "CROSSSLOT errors on the cluster");
    }

    /** A redis:// URL of one cluster node would get MOVED for most keys: refused at once, with the URL to use. */
    @Test
    void aRedisUrlOfOneClusterNodeIsRefusedWithTheClusterUrlToUse() {
        RedisClusterSet.Node node = RedisClusterSet.shared().masters().getFirst();
        CliRun run = CliRun.of("queues", "--broker", "redis://127.0.0.1:" + node.port(), "--queues", "q");

        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.err().contains("this server is a node of a Redis Cluster, which a redis:// URL cannot use: use"
                + " redis+cluster://127.0.0.1:" + node.port()), run.err());
    }

    /** A Cluster keeps workflows: the CLI shows one submitted there, with each job, and cancels it. */
    @Test
    void aWorkflowCommandOnAClusterShowsAndCancelsAWorkflowSubmittedThere() {
        String url = RedisClusterSet.shared().url();
        io.binomic.api.Task<String, Void> work = io.binomic.api.Task.builder("work", String.class).queue("cluster-cli-workflows").build();
        UUID id;
        BinomicConfig config = BinomicConfig.builder().brokerUrl(url).schedulePeriodicTasks(false).build();
        try (Binomic producer = Binomic.builder().config(config).task(work).build().start()) {
            id = producer.submit(io.binomic.core.Workflow.builder().then("fetch", work, "a").then("store", work, "b").build()).id();
        }
        CliRun show = CliRun.of("workflow", "show", "--broker", url, "--id", id.toString());
        assertEquals(0, show.exit(), show.toString());
        assertTrue(show.out().contains("state      RUNNING") && show.out().lines().anyMatch(l -> l.startsWith("store")
                && l.contains("WAITING")), show.out());
        CliRun cancel = CliRun.of("workflow", "cancel", "--broker", url, "--id", id.toString());
        assertEquals(0, cancel.exit(), cancel.toString());
        CliRun after = CliRun.of("workflow", "show", "--broker", url, "--id", id.toString());
        assertTrue(after.out().contains("(cancel requested)") && after.out().lines().anyMatch(l -> l.startsWith("store")
                && l.contains("CANCELLED")), after.out());
        CliRun unknown = CliRun.of("workflow", "show", "--broker", url, "--id", UUID.randomUUID().toString());
        assertEquals(1, unknown.exit(), unknown.toString());
        assertTrue(unknown.err().contains("no workflow"), unknown.err());
        assertFalse(unknown.err().contains("Usage:"), unknown.err());
    }

    /** One queue name per master: queues of one prefix whose streams hash to slots of different masters. */
    static Map<RedisClusterSet.Node, String> queuesOnEveryMaster(RedisClusterSet cluster, String prefix) {
        Map<RedisClusterSet.Node, String> chosen = new LinkedHashMap<>();
        List<RedisClusterSet.Node> masters = new ArrayList<>(cluster.masters());
        for (int i = 0; chosen.size() < masters.size(); i++) {
            String q = prefix + "-" + i;
            chosen.putIfAbsent(cluster.masterOf("binomic:{" + q + "}:stream"), q);
        }
        return chosen;
    }
}
