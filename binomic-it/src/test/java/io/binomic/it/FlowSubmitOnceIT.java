package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A batch's or a workflow's submit, and an add to an open batch, reach Redis at most once, and their
 * failure says whether the batch or workflow was created: one sent while Redis is frozen is stored
 * once when Redis resumes, and its failure (if any) says it may have been, with its id, never that
 * it "exists already" (a resend meeting the first send, which would lead the caller to submit a
 * second batch); one that found Redis stopped is not stored when Redis comes back, as its failure
 * says. Where a submit is still sent again whole ({@code wait.replicas}), the resend finds what the
 * first send created and changes nothing.
 */
class FlowSubmitOnceIT {
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(800);
    /** Longer than every retry the client could still have running after the submit ended. */
    private static final long SETTLE_MILLIS = 10_000;
    private static final int JOBS = 3;

    /** What is submitted: its flow's kind (the name in its key and its failure), what a submit does to it, its jobs. */
    enum Kind {
        BATCH("batch", "created", JOBS),
        ADD_TO_BATCH("batch", "added", 1),
        WORKFLOW("workflow", "created", JOBS);

        final String flow;
        final String done;
        final int jobs;

        Kind(String flow, String done, int jobs) {
            this.flow = flow;
            this.done = done;
            this.jobs = jobs;
        }
    }

    /** One test's client, queue and, for an add, the open batch it adds to (submitted before Redis fails). */
    private record Flow(Kind kind, Binomic client, String queue, BatchHandle open) {
        Task<String, Void> task() {
            return Task.builder("flow-job", String.class).queue(queue).build();
        }

        static Flow ready(Kind kind, Binomic client, String queue) {
            BatchHandle open = kind == Kind.ADD_TO_BATCH ? client.batch().keepOpen().submit() : null;
            // connected, scripts loaded: what follows is the submit alone
            client.submit(Task.builder("warm", String.class).queue(queue + "-warm").build(), "warm");
            return new Flow(kind, client, queue, open);
        }

        /** Submits a batch of {@value FlowSubmitOnceIT#JOBS} jobs, a workflow of as many roots, or adds a job to the open batch. */
        void submit() {
            Task<String, Void> task = task();
            switch (kind) {
                case BATCH -> {
                    var batch = client.batch();
                    for (int i = 0; i < JOBS; i++) {
                        batch.add(task, marker(queue) + " #" + i);
                    }
                    batch.submit();
                }
                case ADD_TO_BATCH -> open.add(task, marker(queue));
                case WORKFLOW -> {
                    var workflow = Workflow.builder();
                    for (int i = 0; i < JOBS; i++) {
                        workflow.add("n" + i, task, marker(queue) + " #" + i); // a root: enqueued by the submit
                    }
                    client.submit(workflow.build());
                }
            }
        }
    }

    /**
     * A Redis, a client and a flow of each kind, frozen together, the submits sent at once and given
     * one settle wait after the thaw: each kind keeps a server of its own, since what a submit
     * created is told by every batch or workflow in Redis; a kind's failure names it.
     */
    @Test
    void submitsSentToAFrozenRedisAreStoredAtMostOnceAndTheirFailuresSaySo() throws Exception {
        try (Rigs rigs = Rigs.ready("frozen")) {
            Map<Kind, CompletableFuture<Void>> submits = new EnumMap<>(Kind.class);
            rigs.forEach(rig -> rig.redis.freeze());
            try {
                rigs.forEach(rig -> submits.put(rig.flow.kind(), CompletableFuture.runAsync(rig.flow::submit)));
                // Frozen on: whatever the clients resend meanwhile waits in the socket for the thaw.
                RedisServer.sleep(4 * COMMAND_TIMEOUT.toMillis());
            } finally {
                rigs.forEach(rig -> rig.redis.thaw());
            }
            Map<Kind, Throwable> failures = new EnumMap<>(Kind.class);
            for (Map.Entry<Kind, CompletableFuture<Void>> submit : submits.entrySet()) {
                failures.put(submit.getKey(), outcome(submit.getValue()));
            }
            RedisServer.sleep(SETTLE_MILLIS);
            assertAll("one freeze, each kind on its own server and client",
                    rigs.stream().map(rig -> () -> checkFrozen(rig, failures.get(rig.flow.kind()))));
        }
    }

    /** One kind's submit sent to its frozen Redis, after the thaw and the settle wait: stored at most once, as its failure says. */
    private static void checkFrozen(Rig rig, Throwable failure) {
        Kind kind = rig.flow.kind();
        Set<String> created = difference(flows(rig.redis, kind), rig.before);
        List<String> jobs = entriesOf(rig.redis, rig.flow.queue());
        String said = kind + ": " + (failure == null ? "the submit returned" : "the submit threw: " + failure);
        System.out.println(kind + " under the freeze: " + jobs.size() + " jobs, created " + created + "; " + said);
        assertEquals(jobs.size(), jobs.stream().distinct().count(), "a job enqueued twice: " + jobs + "; " + said);
        assertTrue(jobs.size() <= kind.jobs, jobs + "; " + said);
        if (kind != Kind.ADD_TO_BATCH) {
            assertTrue(created.size() <= 1, created + "; " + said);
        }
        if (failure == null) {
            assertEquals(kind.jobs, jobs.size(), said);
            return;
        }
        assertTrue(failure instanceof BrokerException, said);
        String message = failure.getMessage();
        assertFalse(message.contains("exists already"), said);
        if (message.contains("not " + kind.done)) {
            assertEquals(List.of(), jobs, said);
            assertEquals(Set.of(), kind == Kind.ADD_TO_BATCH ? Set.of() : created, said);
            return;
        }
        assertTrue(message.contains("may have been " + kind.done + " once"), said);
        if (kind != Kind.ADD_TO_BATCH) {
            String id = idIn(message, kind.flow);
            assertTrue(Set.of(id).containsAll(created), "created " + created + "; " + said);
            assertEquals(created.isEmpty() ? 0 : kind.jobs, jobs.size(), "all or none: " + jobs + "; " + said);
        }
    }

    /**
     * A Redis, a client and a flow of each kind, stopped together, the submits sent at once so that
     * each Redis comes back right after its submit threw, and one settle wait for all; a kind's
     * failure names it.
     */
    @Test
    void submitsThatFoundRedisStoppedAreNotStoredWhenRedisComesBack() throws Exception {
        try (Rigs rigs = Rigs.ready("down")) {
            Map<Kind, CompletableFuture<Throwable>> failures = new EnumMap<>(Kind.class);
            rigs.forEach(rig -> rig.redis.stop());
            try {
                rigs.forEach(rig -> failures.put(rig.flow.kind(), Await.failureOf(rig.flow::submit)));
                CompletableFuture.allOf(failures.values().toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
            } finally {
                rigs.forEach(rig -> rig.redis.start());
            }
            RedisServer.sleep(SETTLE_MILLIS);
            assertAll("one stop, each kind on its own server and client", rigs.stream().map(rig -> () -> {
                Kind kind = rig.flow.kind();
                BrokerException e = assertInstanceOf(BrokerException.class, failures.get(kind).join(),
                        kind + ": the submit did not throw a BrokerException");
                String said = kind + ": the submit threw: " + e;
                assertEquals(List.of(), entriesOf(rig.redis, rig.flow.queue()), "stored after the submit threw; " + said);
                assertEquals(Set.of(), difference(flows(rig.redis, kind), rig.before), said);
                assertTrue(e.getMessage().contains("not " + kind.done), said);
                if (kind != Kind.ADD_TO_BATCH) {
                    idIn(e.getMessage(), kind.flow);
                }
            }));
        }
    }

    /** One kind's Redis of its own, its client, its flow ready to submit, and the flows of its kind in Redis before the submit. */
    private record Rig(RedisServer redis, Flow flow, Set<String> before) { }

    /** A {@link Rig} per kind, closed together. */
    private static final class Rigs implements AutoCloseable {
        private final List<Rig> rigs = new ArrayList<>();
        private final List<AutoCloseable> open = new ArrayList<>();

        static Rigs ready(String fault) {
            String run = UUID.randomUUID().toString().substring(0, 8);
            Rigs rigs = new Rigs();
            try {
                for (Kind kind : Kind.values()) {
                    RedisServer redis = RedisServer.startNew();
                    rigs.open.add(redis);
                    Binomic client = client(redis);
                    rigs.open.add(client);
                    Flow flow = Flow.ready(kind, client, fault + "-" + kind.name().toLowerCase() + "-" + run);
                    rigs.rigs.add(new Rig(redis, flow, flows(redis, kind)));
                }
                return rigs;
            } catch (RuntimeException e) {
                rigs.close();
                throw e;
            }
        }

        void forEach(Consumer<Rig> action) {
            rigs.forEach(action);
        }

        Stream<Rig> stream() {
            return rigs.stream();
        }

        @Override
        public void close() {
            // clients before their servers
            for (int i = open.size() - 1; i >= 0; i--) {
                try {
                    open.get(i).close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /**
     * With {@code wait.replicas} a submit no replica confirmed is sent again whole: the resend finds
     * the batch or workflow it created, and changes nothing; the same id created at another moment
     * (another submit) is still refused. The scripts run as the broker sends them, under a key prefix
     * of this test's own.
     */
    @ParameterizedTest
    @ValueSource(strings = {"SUBMIT_BATCH", "SUBMIT_BATCH_CLUSTER", "SUBMIT_WORKFLOW"})
    void aSubmitSentAgainWholeFindsWhatItCreatedAndChangesNothing(String script) throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = "resent-" + UUID.randomUUID().toString().substring(0, 8);
        String queue = "q";
        String id = UUID.randomUUID().toString();
        String job = UUID.randomUUID().toString();
        String created = Long.toString(System.currentTimeMillis());
        String stream = prefix + ":{" + queue + "}:stream";
        String record = prefix + ":{" + queue + "}:job:" + job;
        String flows = prefix + ":{" + prefix + ":flows}:";
        List<String> call = switch (script) {
            case "SUBMIT_BATCH" -> List.of("4", prefix + ":batch:{" + id + "}", prefix + ":batch:{" + id + "}:jobs", stream, record,
                    "new", "0", "60000", created, "0", job, queue, "5", "t", "60000", "4", "id", job, "task", "t");
            case "SUBMIT_BATCH_CLUSTER" -> List.of("4", flows + "batch:" + id, flows + "batch:" + id + ":jobs",
                    flows + "batch:" + id + ":due", flows + "due", "new", "0", "60000", created, "8", "id", id, "duekey",
                    flows + "batch:" + id + ":due", "index", flows + "due", "counts", flows + "counts", job, queue, "its delivery");
            default -> List.of("4", prefix + ":workflow:{" + id + "}", stream, record, prefix + ":{" + queue + "}:delayed", "60000",
                    created, "a", job, queue, "t", "60000", "[]", "[]", "[]",
                    "{\"id\":\"" + job + "\",\"task\":\"t\",\"queue\":\"" + queue + "\"}", "0");
        };
        String key = call.get(1);
        String counts = script.equals("SUBMIT_BATCH_CLUSTER") ? flows + "counts" : prefix + ":flows:counts";
        String open = (script.equals("SUBMIT_WORKFLOW") ? "workflow" : "batch") + ":open";
        List<String> eval = new ArrayList<>(List.of("EVAL", brokerScript(script)));
        eval.addAll(call);

        assertEquals(1L, redis.call(eval.toArray(String[]::new)), "the first send");
        Map<String, String> stored = hash(redis, key);
        List<?> entries = (List<?>) redis.call("XRANGE", stream, "-", "+");
        assertEquals(1L, redis.call(eval.toArray(String[]::new)), "the resend: created");
        assertEquals(stored, hash(redis, key), "the resend changed nothing");
        assertEquals(entries, redis.call("XRANGE", stream, "-", "+"), "no job enqueued again");
        assertEquals("1", redis.call("HGET", counts, open), "counted once");

        eval.set(eval.indexOf(created), Long.toString(Long.parseLong(created) + 1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> redis.call(eval.toArray(String[]::new)));
        assertTrue(e.getMessage().contains("exists already"), e.getMessage());
        List<?> keys = (List<?>) redis.call("KEYS", prefix + ":*");
        redis.call(Stream.concat(Stream.of("DEL"), keys.stream().map(String::valueOf)).toArray(String[]::new));
    }

    /** A script of the broker's, as it sends it (binomic-it is on the class path: its internals are readable). */
    private static String brokerScript(String name) throws ReflectiveOperationException {
        Field field = Class.forName("io.binomic.redis.internal.LuaScripts").getDeclaredField(name);
        field.setAccessible(true);
        return (String) field.get(null);
    }

    private static Map<String, String> hash(RedisServer redis, String key) {
        List<?> flat = (List<?>) redis.call("HGETALL", key);
        Map<String, String> fields = new HashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            fields.put(String.valueOf(flat.get(i)), String.valueOf(flat.get(i + 1)));
        }
        return fields;
    }

    private static Binomic client(RedisServer redis) {
        return Binomic.builder().config(BinomicConfig.builder().broker(BrokerConfig.builder().url(redis.url())
                .commandTimeout(COMMAND_TIMEOUT).build()).schedulePeriodicTasks(false).build()).build().start();
    }

    /** The submit's failure, null when it returned. */
    private static Throwable outcome(CompletableFuture<Void> submit) throws Exception {
        try {
            submit.get(2, TimeUnit.MINUTES);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    private static String marker(String queue) {
        return "job of " + queue;
    }

    /** The ids of the batches or workflows in Redis. */
    private static Set<String> flows(RedisServer redis, Kind kind) {
        Pattern key = Pattern.compile("binomic:" + kind.flow + ":\\{([0-9a-f-]{36})}");
        return ((List<?>) redis.call("KEYS", "binomic:" + kind.flow + ":*")).stream().map(String::valueOf).map(key::matcher)
                .filter(Matcher::matches).map(m -> m.group(1)).collect(Collectors.toSet());
    }

    private static Set<String> difference(Set<String> after, Set<String> before) {
        return after.stream().filter(id -> !before.contains(id)).collect(Collectors.toSet());
    }

    /** The id the failure names, as "batch id ..." or "workflow id ...". */
    private static String idIn(String message, String flow) {
        Matcher m = Pattern.compile(flow + " id ([0-9a-f-]{36})").matcher(message);
        assertTrue(m.find(), "no " + flow + " id in: " + message);
        return m.group(1);
    }

    /** The message ids of the entries on {@code queue}'s stream that hold its marker. */
    private static List<String> entriesOf(RedisServer redis, String queue) {
        return ((List<?>) redis.call("XRANGE", "binomic:{" + queue + "}:stream", "-", "+")).stream()
                .map(entry -> (List<?>) ((List<?>) entry).get(1))
                .filter(fields -> fields.stream().anyMatch(v -> String.valueOf(v).contains(marker(queue))))
                .map(fields -> String.valueOf(fields.get(fields.indexOf("id") + 1)))
                .toList();
    }
}
