package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.JobNotFoundException;
import io.binomic.api.JobState;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import io.binomic.jdbc.OutboxStats;
import io.binomic.jdbc.OutboxTool;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Logger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The outbox used the wrong way, or in trouble, against a PostgreSQL and a Redis of the test's own:
 * a handle awaited before any relay ran, an auto-commit connection, a missing or wrong table, a row
 * that cannot be read back, Redis down, and the command line's errors.
 */
class OutboxMisuseIT {
    @RegisterExtension
    static final OutboxServers servers = new OutboxServers();

    public record Item(int n) { }

    private String queue;
    private Task<Item, String> task;

    @BeforeEach
    void newQueue() {
        queue = "misuse-" + UUID.randomUUID().toString().substring(0, 8);
        task = Task.builder("echo", Item.class, String.class).queue(queue).build();
    }

    private Binomic client() {
        return client(BrokerConfig.builder().url(servers.redis().url()).build().keyPrefix());
    }

    /** A client whose broker keys start with {@code keyPrefix}: its workers read only jobs stored under it. */
    private Binomic client(String keyPrefix) {
        return client(BrokerConfig.builder().url(servers.redis().url()).keyPrefix(keyPrefix).build());
    }

    private Binomic client(BrokerConfig broker) {
        BinomicConfig config = BinomicConfig.builder().broker(broker)
                .schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).concurrency(2).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        return Binomic.builder().config(config).handle(task, item -> "done " + item.n()).build().start();
    }

    private static OutboxStats statsOf(OutboxRelay relay) {
        try {
            return relay.stats();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static OutboxRelay.Builder relay(Binomic binomic) {
        return OutboxRelay.builder(binomic, servers.dataSource()).pollInterval(Duration.ofMillis(300)).errorBackoff(Duration.ofMillis(200));
    }

    private List<JobHandle<String>> commit(Outbox outbox, int from, int count) throws SQLException {
        try (Connection c = servers.dataSource().getConnection()) {
            c.setAutoCommit(false);
            List<JobHandle<String>> handles = new ArrayList<>();
            for (int n = from; n < from + count; n++) {
                handles.add(outbox.submit(c, task, new Item(n)));
            }
            c.commit();
            return handles;
        }
    }

    @Test
    void aHandleAwaitedBeforeAnyRelayRanWaitsForTheRelayUpToItsTimeout() throws Exception {
        try (Binomic binomic = client()) {
            binomic.startWorker();
            JobHandle<String> handle = commit(Outbox.of(binomic), 1, 1).getFirst();
            CompletableFuture<String> awaited = CompletableFuture.supplyAsync(() -> handle.await(Duration.ofSeconds(60)));
            CompletableFuture<String> result = handle.result();
            Thread.sleep(4_000); // longer than a plain handle took to give a job without a record up
            assertFalse(awaited.isDone(), "await gave up before its timeout: " + awaited);
            assertFalse(result.isDone(), "result() gave up: " + result);
            assertEquals(JobState.UNKNOWN, handle.status().state());
            try (OutboxRelay relay = relay(binomic).build().start()) {
                assertEquals("done 1", awaited.get(60, TimeUnit.SECONDS));
                Await.relayed(relay, 1);
                assertEquals(1, relay.relayed());
                assertEquals("done 1", result.get(60, TimeUnit.SECONDS));
                assertEquals("done 1", handle.await(Duration.ofSeconds(10)), "a handle of a relayed job answers as a plain one");
            }
        }
    }

    @Test
    void aHandleWithoutARelayTimesOutSayingSoWhileAPlainHandleOfAWrongIdIsNotFound() throws Exception {
        try (Binomic binomic = client()) {
            JobHandle<String> handle = commit(Outbox.of(binomic), 1, 1).getFirst();
            JobTimeoutException timeout = assertThrows(JobTimeoutException.class, () -> handle.await(Duration.ofSeconds(1)));
            assertTrue(timeout.getMessage().contains("not relayed yet"), timeout.getMessage());
            JobHandle<String> wrong = binomic.job(task, UUID.randomUUID());
            assertThrows(JobNotFoundException.class, () -> wrong.await(Duration.ofSeconds(30)), "a plain handle of an id never stored");
        }
    }

    @Test
    void anAutoCommitConnectionIsRefusedAndWritesNothing() throws SQLException {
        try (Binomic binomic = client(); Connection c = servers.dataSource().getConnection()) {
            c.setAutoCommit(true);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Outbox.of(binomic).submit(c, task, new Item(1)));
            assertTrue(e.getMessage().contains("auto-commit") && e.getMessage().contains("setAutoCommit(false)"), e.getMessage());
            assertEquals(0, servers.count(""), "a refused submit wrote a row");
        }
    }

    @Test
    void aMissingOrWrongTableIsNamedWithTheMigrationThatCreatesIt() throws Exception {
        servers.execute("CREATE TABLE IF NOT EXISTS wrong_outbox (id INT)");
        try (Binomic binomic = client()) {
            for (String table : List.of("no_such_outbox", "wrong_outbox")) {
                try (Connection c = servers.dataSource().getConnection()) {
                    c.setAutoCommit(false);
                    SQLException e = assertThrows(SQLException.class, () -> Outbox.of(binomic, table).submit(c, task, new Item(1)));
                    assertTrue(e.getMessage().contains("outbox table " + table) && e.getMessage().contains("V1__binomic_outbox.sql")
                            && e.getMessage().contains("Outbox.schemaSql()"), e.getMessage());
                    c.rollback();
                }
                IllegalStateException atStart = assertThrows(IllegalStateException.class, () -> relay(binomic).table(table).build().start());
                assertTrue(atStart.getMessage().contains("outbox table " + table) && atStart.getMessage().contains("V1__binomic_outbox.sql"),
                        atStart.getMessage());
            }
        }
        Tool relay = tool(List.of("relay", "--jdbc", servers.postgres().jdbcUrl(), "--table", "nope", "--broker", servers.redis().url()),
                null);
        assertEquals(1, relay.exit(), relay.toString());
        assertFalse(relay.out().contains("READY"), relay.toString());
        assertTrue(relay.err().lines().anyMatch(l -> l.startsWith("binomic outbox: the outbox table nope is missing")
                && l.contains("V1__binomic_outbox.sql")), relay.toString());
    }

    @Test
    void aRowThatCannotBeReadIsSetAsideOnceAndTheRowsBehindItGoOn() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(OutboxRelay.class.getName());
        Handler capture = OutboxServers.capture(warnings);
        logger.addHandler(capture);
        try (Binomic binomic = client()) {
            List<JobHandle<String>> handles = commit(Outbox.of(binomic), 0, 6);
            servers.execute("UPDATE binomic_outbox SET headers = '%zz=1' WHERE job_id = '" + handles.get(1).id() + "'");
            servers.execute("UPDATE binomic_outbox SET job_id = 'not-a-uuid' WHERE job_id = '" + handles.get(3).id() + "'");
            binomic.startWorker();
            try (OutboxRelay relay = relay(binomic).build().start()) {
                for (int i : List.of(0, 2, 4, 5)) {
                    assertEquals("done " + i, handles.get(i).await(Duration.ofSeconds(60)));
                }
                commit(Outbox.of(binomic), 6, 1).getFirst().await(Duration.ofSeconds(60)); // rounds after the rows were set aside
                // The job can run before the round that relayed it has counted it and deleted its row.
                Await.until(Duration.ofSeconds(30), () -> statsOf(relay).relay().relayed() >= 5 && statsOf(relay).waiting() == 0,
                        () -> statsOf(relay).summary());
                OutboxStats stats = relay.stats();
                assertEquals(0, stats.waiting(), stats.summary());
                assertEquals(2, stats.setAside(), stats.summary());
                assertEquals(5, stats.relay().relayed(), stats.summary());
                assertEquals(2, servers.count(" WHERE failure LIKE '%cannot be read back into a job%'"));
            }
            List<String> setAside = warnings.stream().filter(w -> w.contains("cannot be read back into a job")).toList();
            assertEquals(2, setAside.size(), "one warning per row set aside: " + warnings);
            assertTrue(setAside.stream().anyMatch(w -> w.contains("job not-a-uuid")), setAside.toString());
            assertTrue(failure(handles.get(1).id().toString()).contains("headers: '%zz=1' is not form-encoded"),
                    failure(handles.get(1).id().toString()));
            assertTrue(failure("not-a-uuid").contains("job_id 'not-a-uuid' is not a UUID"), failure("not-a-uuid"));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertEquals(0, OutboxTool.status(servers.postgres().jdbcUrl(), null, null, "binomic_outbox",
                    new PrintStream(out, true, StandardCharsets.UTF_8), System.err));
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("0 waiting, oldest 0.0 s, 2 set aside"), out.toString(StandardCharsets.UTF_8));
        } finally {
            logger.removeHandler(capture);
        }
    }

    @Test
    void rowsWithQueueOrTaskNamesASubmitRefusesAreSetAsideAndTheRestGoOn() throws Exception {
        try (Binomic binomic = client()) {
            List<JobHandle<String>> handles = commit(Outbox.of(binomic), 0, 5);
            servers.execute("UPDATE binomic_outbox SET queue = '' WHERE job_id = '" + handles.get(0).id() + "'");
            servers.execute("UPDATE binomic_outbox SET queue = 'a b' WHERE job_id = '" + handles.get(1).id() + "'");
            servers.execute("UPDATE binomic_outbox SET task = '" + "t".repeat(250) + "' WHERE job_id = '" + handles.get(2).id() + "'");
            binomic.startWorker();
            try (OutboxRelay relay = relay(binomic).build().start()) {
                assertEquals("done 3", handles.get(3).await(Duration.ofSeconds(60)));
                assertEquals("done 4", handles.get(4).await(Duration.ofSeconds(60)));
                Await.relayed(relay, 2);
                assertEquals(2, relay.relayed());
                assertEquals(3, relay.stats().setAside(), relay.stats().summary());
            }
            assertTrue(failure(handles.get(0).id().toString()).contains("queue must be 1-200 characters"), failure(handles.get(0).id().toString()));
            assertTrue(failure(handles.get(1).id().toString()).contains("was 'a b'"), failure(handles.get(1).id().toString()));
            assertTrue(failure(handles.get(2).id().toString()).contains("task name must be 1-200 characters"), failure(handles.get(2).id().toString()));
        }
    }

    @Test
    void aRowOfAClientWithAnotherKeyPrefixIsSetAsideNamingBothPrefixes() throws Exception {
        try (Binomic other = client("otherapp"); Binomic binomic = client()) {
            JobHandle<String> foreign = commit(Outbox.of(other), 1, 1).getFirst();
            JobHandle<String> ours = commit(Outbox.of(binomic), 2, 1).getFirst();
            binomic.startWorker();
            try (OutboxRelay relay = relay(binomic).build().start()) {
                assertEquals("done 2", ours.await(Duration.ofSeconds(60)));
                Await.relayed(relay, 1);
                assertEquals(1, relay.relayed(), "the row of the other prefix was relayed");
            }
            String failure = failure(foreign.id().toString());
            assertTrue(failure.contains("key prefix 'otherapp'") && failure.contains("key prefix 'binomic'"), failure);
        }
    }

    @Test
    void rowsOfAnotherKeyPrefixAreWarnedOnceARoundWithTheirCountAndTheFirst() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(OutboxRelay.class.getName());
        Handler capture = OutboxServers.capture(lines);
        logger.addHandler(capture);
        try (Binomic other = client("otherapp"); Binomic binomic = client()) {
            List<JobHandle<String>> foreign = commit(Outbox.of(other), 1, 5);
            try (OutboxRelay relay = relay(binomic).build()) {
                relay.relayOnce();
            }
            List<String> warnings = lines.stream().filter(l -> l.startsWith("WARNING")).toList();
            assertEquals(1, warnings.size(), "one warning for the round: " + lines);
            assertTrue(warnings.getFirst().contains("5 rows (the first: seq ") && warnings.getFirst().contains(foreign.getFirst().id().toString())
                    && warnings.getFirst().contains("key prefix 'otherapp'"), warnings.getFirst());
            for (JobHandle<String> h : foreign) {
                assertTrue(failure(h.id().toString()).contains("key prefix 'otherapp'"), "every row is set aside");
            }
        } finally {
            logger.removeHandler(capture);
        }
    }

    @Test
    void aRelayOnAClientThatWasNeverStartedIsRefusedAtStart() {
        Binomic never = Binomic.builder().config(BinomicConfig.builder()
                .broker(BrokerConfig.builder().url(servers.redis().url()).build()).build()).build();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> relay(never).build().start());
        assertTrue(e.getMessage().contains("an outbox relay needs a started Binomic: call binomic.start() before the relay's start()"),
                e.getMessage());
    }

    @Test
    void theRelayToolTakesTheKeyPrefixFromTheEnvironmentAndRelaysUnderIt() throws Exception {
        try (Binomic writer = client("bootoi")) {
            JobHandle<String> handle = commit(Outbox.of(writer), 7, 1).getFirst();
            List<String> lines = new CopyOnWriteArrayList<>();
            Process relay = servers.relayTool(servers.redis().url(), Map.of("BINOMIC_BROKER_KEY_PREFIX", "bootoi"), lines);
            try {
                Await.until(Duration.ofSeconds(120), () -> lines.stream().anyMatch(l -> l.startsWith("OUTBOX RELAY READY")), lines::toString);
                assertTrue(lines.stream().anyMatch(l -> l.startsWith("OUTBOX RELAY READY binomic_outbox") && l.endsWith("key-prefix bootoi")),
                        lines.toString());
                writer.startWorker();
                assertEquals("done 7", handle.await(Duration.ofSeconds(60)), "the job relayed under the writer's prefix runs");
                assertEquals(0, servers.count(""));
            } finally {
                relay.destroy();
                assertTrue(relay.waitFor(60, TimeUnit.SECONDS), "the relay did not stop");
            }
        }
    }

    @Test
    void aRelayOfItsOwnStartedBeforeRedisWaitsSayingSoThenRelaysEveryRowOnce() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(OutboxRelay.class.getName());
        Handler capture = OutboxServers.capture(lines);
        logger.addHandler(capture);
        try (RedisServer late = RedisServer.notStarted(); Binomic writer = client()) {
            List<JobHandle<String>> handles = new ArrayList<>(commit(Outbox.of(writer), 0, 20));
            BrokerConfig broker = BrokerConfig.builder().url(late.url()).build();
            try (OutboxRelay relay = OutboxRelay.builder(broker, servers.dataSource()).pollInterval(Duration.ofMillis(300))
                    .errorBackoff(Duration.ofMillis(200)).build().start()) {
                Await.until(Duration.ofSeconds(60), () -> relay.failures() >= 3, () -> relay.failures() + " failed rounds");
                handles.addAll(commit(Outbox.of(writer), 20, 10)); // rows written while the relay waits
                assertEquals(30, servers.count(""), "rows relayed with no Redis to relay them to");
                late.start();
                Await.until(Duration.ofSeconds(60), () -> servers.count("") == 0, () -> servers.count("") + " rows still waiting");
                Await.relayed(relay, 30);
                assertEquals(30, relay.relayed(), "jobs relayed");
                assertEquals(0, relay.duplicates(), "jobs found stored already");
            }
            try (Binomic worker = client(broker)) {
                worker.startWorker();
                for (int n = 0; n < handles.size(); n++) {
                    assertEquals("done " + n, worker.job(task, handles.get(n).id()).await(Duration.ofSeconds(60)));
                }
            }
            List<String> warnings = lines.stream().filter(l -> l.startsWith("WARNING")).toList();
            assertEquals(1, warnings.size(), "one warning while Redis is not there: " + lines);
            String warning = warnings.getFirst();
            assertTrue(warning.contains("outbox relay of binomic_outbox cannot reach the broker at " + late.url() + " yet")
                    && warning.contains("the rows wait in the table") && warning.contains("cannot connect to Redis"), warning);
            assertEquals(1, warning.strip().lines().count(), "one line: " + warning);
            assertEquals(1, lines.stream().filter(l -> l.startsWith("INFO") && l.contains("outbox relay of binomic_outbox reached the broker at "
                    + late.url())).count(), lines.toString());
        } finally {
            logger.removeHandler(capture);
        }
    }

    private static String failure(String jobId) throws SQLException {
        try (Connection c = servers.dataSource().getConnection();
             var select = c.prepareStatement("SELECT failure FROM binomic_outbox WHERE job_id = ?")) {
            select.setString(1, jobId);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next() ? String.valueOf(rs.getString(1)) : "no row of job " + jobId;
            }
        }
    }

    @Test
    void whileRedisIsDownTheRelayWarnsOnceInOneLineWithoutTheScript() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(OutboxRelay.class.getName());
        Handler capture = OutboxServers.capture(lines);
        logger.addHandler(capture);
        try (Binomic binomic = client(); OutboxRelay relay = relay(binomic).build().start()) {
            servers.redis().stop();
            List<JobHandle<String>> handles;
            try {
                handles = commit(Outbox.of(binomic), 0, 3);
                Await.until(Duration.ofSeconds(60), () -> relay.failures() >= 3, () -> relay.failures() + " failed rounds");
            } finally {
                servers.redis().start();
            }
            Await.until(Duration.ofSeconds(120), () -> servers.count("") == 0, () -> "rows still waiting after Redis came back");
            binomic.startWorker();
            assertEquals("done 2", handles.get(2).await(Duration.ofSeconds(60)));
            List<String> warnings = lines.stream().filter(l -> l.startsWith("WARNING")).toList();
            assertEquals(1, warnings.size(), "one warning per outage: " + lines);
            String warning = warnings.getFirst();
            assertTrue(warning.contains("outbox relay of binomic_outbox failed") && warning.contains("Redis"), warning);
            assertEquals(1, warning.strip().lines().count(), "one line: " + warning);
            for (String script : List.of("redis.call", "local ", "KEYS[", "ByteBuf", "params:", "command:")) {
                assertFalse(warning.contains(script), "the warning carries '" + script + "': " + warning);
            }
            assertEquals(1, lines.stream().filter(l -> l.contains("outbox relay of binomic_outbox recovered")).count(), lines.toString());
        } finally {
            logger.removeHandler(capture);
        }
    }

    @Test
    void theCommandLineNamesItsErrorsAndExitsZeroOnHelp() throws Exception {
        Tool help = tool(List.of("--help"), null);
        assertEquals(0, help.exit(), help.toString());
        assertTrue(help.out().contains("usage: OutboxTool status"), help.toString());

        Tool unset = tool(List.of("status", "--jdbc", servers.postgres().jdbcUrl(), "--password-env", "BINOMIC_TEST_UNSET_PASSWORD"), null);
        assertEquals(2, unset.exit(), unset.toString());
        assertTrue(unset.err().startsWith("binomic outbox: --password-env BINOMIC_TEST_UNSET_PASSWORD: the environment variable"
                + " BINOMIC_TEST_UNSET_PASSWORD is not set"), unset.toString());

        Tool mysql = tool(List.of("status", "--jdbc", "jdbc:mysql://127.0.0.1:1/app"), null);
        assertEquals(1, mysql.exit(), mysql.toString());
        assertTrue(mysql.err().startsWith("binomic outbox: cannot read the outbox table binomic_outbox: No suitable driver")
                && mysql.err().contains("add the driver's jar for that database to -cp"), mysql.toString());

        Tool relayMysql = tool(List.of("relay", "--jdbc", "jdbc:mysql://127.0.0.1:1/app", "--broker", servers.redis().url()), null);
        assertEquals(1, relayMysql.exit(), relayMysql.toString());
        assertFalse(relayMysql.out().contains("READY"), relayMysql.toString());
        assertTrue(relayMysql.err().startsWith("binomic outbox: cannot relay from jdbc:mysql://127.0.0.1:1/app: No suitable driver")
                && relayMysql.err().contains("mysql-connector-j.jar"), relayMysql.toString());

        Tool badPrefix = tool(List.of("relay", "--jdbc", servers.postgres().jdbcUrl(), "--broker", servers.redis().url(),
                "--key-prefix", "a b"), null);
        assertEquals(2, badPrefix.exit(), badPrefix.toString());
        assertTrue(badPrefix.err().startsWith("binomic outbox: ") && badPrefix.err().contains("keyPrefix")
                && badPrefix.err().contains("--key-prefix"), badPrefix.toString());

        Tool unknown = tool(List.of("stats"), null);
        assertEquals(2, unknown.exit(), unknown.toString());
        assertEquals("binomic outbox: unknown command 'stats'\nRun 'OutboxTool --help' for its options.\n",
                unknown.err().replace(System.lineSeparator(), "\n"), "the error, then where the help is: " + unknown);

        Tool status = tool(List.of("status", "--jdbc", servers.postgres().jdbcUrl(), "--password-env", "OUTBOX_TEST_PASSWORD"), "unused");
        assertEquals(0, status.exit(), status.toString());
        assertTrue(status.out().startsWith("binomic_outbox: 0 waiting"), status.toString());
    }

    @Test
    void theCommandLineRefusesAnUnknownOrMalformedOptionNamingIt() throws Exception {
        Tool typo = tool(List.of("relay", "--jdbc", servers.postgres().jdbcUrl(), "--broker", servers.redis().url(),
                "--key-prefx", "tool"), null);
        assertEquals(2, typo.exit(), typo.toString());
        assertFalse(typo.out().contains("READY"), typo.toString());
        assertTrue(typo.err().startsWith("binomic outbox: relay: unknown option --key-prefx; did you mean --key-prefix?"), typo.toString());

        Tool table = tool(List.of("status", "--jdbc", servers.postgres().jdbcUrl(), "--tabel", "nosuch"), null);
        assertEquals(2, table.exit(), table.toString());
        assertEquals("", table.out(), "status read a table: " + table);
        assertTrue(table.err().startsWith("binomic outbox: status: unknown option --tabel; did you mean --table?"), table.toString());

        Tool bogus = tool(List.of("status", "--jdbc", servers.postgres().jdbcUrl(), "--bogus", "1"), null);
        assertEquals(2, bogus.exit(), bogus.toString());
        assertTrue(bogus.err().startsWith("binomic outbox: status: unknown option --bogus"), bogus.toString());

        Tool poll = tool(List.of("relay", "--jdbc", servers.postgres().jdbcUrl(), "--broker", servers.redis().url(),
                "--poll-ms", "abc"), null);
        assertEquals(2, poll.exit(), poll.toString());
        assertTrue(poll.err().startsWith("binomic outbox: --poll-ms must be a whole number, was 'abc'"), poll.toString());
    }

    /** Credentials the database refuses do not heal by retrying: the relay does not start, rather than report READY and relay nothing. */
    @Test
    void aRelayWhoseCredentialsTheDatabaseRefusesExitsNamingThem() throws Exception {
        String unknownRole = servers.postgres().jdbcUrl().replace("user=postgres", "user=binomic_no_such_role");
        Tool refused = tool(List.of("relay", "--jdbc", unknownRole, "--broker", servers.redis().url()), null);
        assertEquals(1, refused.exit(), refused.toString());
        assertFalse(refused.out().contains("READY"), refused.toString());
        assertTrue(refused.err().startsWith("binomic outbox: the database refused the relay's credentials: "), refused.toString());
        assertTrue(refused.err().contains("binomic_no_such_role") && refused.err().contains("check --user"), refused.toString());
    }

    /** One run of OutboxTool in a JVM of its own; {@code password} is put in OUTBOX_TEST_PASSWORD when not null. */
    private static Tool tool(List<String> args, String password) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), OutboxTool.class.getName()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove("BINOMIC_TEST_UNSET_PASSWORD");
        if (password != null) {
            builder.environment().put("OUTBOX_TEST_PASSWORD", password);
        }
        // Output to files, not pipes read to their end: a tool that never exits (an option ignored,
        // a relay running) fails this test with what it printed instead of hanging it.
        Path out = Files.createTempFile("outbox-tool", ".out");
        Path err = Files.createTempFile("outbox-tool", ".err");
        try {
            Process p = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            boolean exited = p.waitFor(60, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Tool tool = new Tool(exited ? p.exitValue() : -1, Files.readString(out), Files.readString(err));
            assertTrue(exited, "OutboxTool " + args + " did not exit within 60 s: " + tool);
            return tool;
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private record Tool(int exit, String out, String err) { }
}
