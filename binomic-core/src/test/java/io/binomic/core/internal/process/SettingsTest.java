package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one configuration source of master, workers and CLI: file, environment, flags. */
class SettingsTest {

    @TempDir
    Path dir;

    @Test
    void everySettingOfTheFileReachesItsConfigRecord() {
        Settings s = Settings.parse("""
                # comment
                broker.url = rediss://cache:6380/2
                broker.id = redis
                broker.username = app
                broker.password = s3cret
                broker.database = 2
                broker.connectTimeout = 3s
                broker.commandTimeout = 1500ms
                broker.keyPrefix = shop
                broker.maxPayloadBytes = 4096
                broker.deadLetterMaxCount = 50
                broker.deadLetterMaxAge = 2d
                broker.option.redisson.config = /etc/binomic/redisson.yaml
                task.maxAttempts = 7
                task.timeout = 2m
                task.backoff.base = 2s
                task.backoff.factor = 3
                task.backoff.cap = 1h
                task.backoff.jitter = 0.25
                task.staleAfter = PT10M
                worker.queues = mail, payments
                worker.concurrency = 12
                worker.shutdownGrace = 20s
                worker.leaseTimeout = 45s
                worker.pollTimeout = 2s
                worker.reclaimInterval = 5s
                master.workers = 3
                master.heartbeatInterval = 2s
                master.heartbeatTimeout = 8s
                master.startTimeout = 90s
                master.killGrace = 4s
                master.restartBackoff = 2s
                master.restartBackoffMax = 30s
                master.stateDir = /var/lib/binomic
                master.jvmOptions = -Xmx256m -XX:+UseSerialGC
                """, "binomic.conf");

        BrokerConfig broker = s.broker("memory://");
        assertEquals(BrokerConfig.builder().url("rediss://cache:6380/2").brokerId("redis").username("app").password("s3cret")
                .database(2).connectTimeout(Duration.ofSeconds(3)).commandTimeout(Duration.ofMillis(1500)).keyPrefix("shop")
                .maxPayloadBytes(4096).deadLetterMaxCount(50).deadLetterMaxAge(Duration.ofDays(2))
                .options(Map.of("redisson.config", "/etc/binomic/redisson.yaml")).build(), broker);
        assertEquals(TaskDefaults.builder().maxAttempts(7).taskTimeout(Duration.ofMinutes(2))
                .backoff(Backoff.builder().base(Duration.ofSeconds(2)).factor(3).cap(Duration.ofHours(1)).jitter(0.25).build())
                .staleAfter(Duration.ofMinutes(10))
                .build(), s.taskDefaults());
        WorkerConfig worker = WorkerConfig.builder().queues("mail", "payments").concurrency(12).shutdownGrace(Duration.ofSeconds(20))
                .leaseTimeout(Duration.ofSeconds(45)).pollTimeout(Duration.ofSeconds(2)).reclaimInterval(Duration.ofSeconds(5)).build();
        assertEquals(worker, s.worker());
        MasterConfig master = s.master("memory://", Set.of()).build();
        assertEquals(broker, master.broker());
        assertEquals(worker, master.workerConfig());
        assertEquals(3, master.workers());
        assertEquals(Duration.ofSeconds(8), master.heartbeatTimeout());
        assertEquals(Duration.ofSeconds(90), master.startTimeout());
        assertEquals(Duration.ofSeconds(4), master.killGrace());
        assertEquals(Duration.ofSeconds(2), master.restartBackoffInitial());
        assertEquals(Duration.ofSeconds(30), master.restartBackoffMax());
        assertEquals(Path.of("/var/lib/binomic"), master.stateDirectory());
        assertEquals(List.of("-Xmx256m", "-XX:+UseSerialGC"), master.jvmOptions());
    }

    @Test
    void environmentOverridesTheFileAndFlagsOverrideBoth() throws Exception {
        Path file = Files.writeString(dir.resolve("b.conf"), "broker.keyPrefix = file\nworker.concurrency = 2\ntask.maxAttempts = 2\n");
        Settings s = Settings.load(Optional.of(file), Map.of("BINOMIC_BROKER_KEY_PREFIX", "env", "BINOMIC_WORKER_CONCURRENCY", "3",
                "BINOMIC_BROKER_OPTION_REDISSON_CONFIG", "/r.yaml", "OTHER", "x"));
        assertEquals("env", s.broker("memory://").keyPrefix());
        assertEquals(Map.of("redisson.config", "/r.yaml"), s.broker("memory://").options());
        assertEquals(2, s.taskDefaults().maxAttempts(), "the file's value where the environment has none");
        assertEquals(3, s.worker().concurrency());
        assertEquals(4, s.with("worker.concurrency", "4", "--concurrency").worker().concurrency());
        assertEquals("memory://", s.broker("memory://").url(), "the caller's default URL when none is set");
    }

    /** The master's builder takes each setting once: the keys its options set are left to them, the rest come from here. */
    @Test
    void aMasterSettingTheCallerSetsItselfIsLeftToIt() {
        Settings s = Settings.parse("master.workers = 3\nworker.concurrency = 7\nmaster.killGrace = 4s\n", "binomic.conf");
        MasterConfig master = s.master("memory://", Set.of("master.workers", "worker.concurrency")).workers(8).concurrency(2).build();
        assertEquals(8, master.workers());
        assertEquals(2, master.concurrency());
        assertEquals(Duration.ofSeconds(4), master.killGrace(), "the keys no option sets come from the settings");
        assertThrows(IllegalArgumentException.class, () -> s.master("memory://", Set.of()).workers(8),
                "a setting given twice is refused, not silently replaced");
    }

    /** A file's poll timeout that only a longer --lease-timeout makes valid is judged with that flag, not alone. */
    @Test
    void aFileValueValidOnlyWithTheCallersFlagIsAccepted() {
        Settings s = Settings.parse("worker.pollTimeout = 40s\n", "binomic.conf");
        MasterConfig master = s.master("memory://", Set.of("worker.leaseTimeout")).leaseTimeout(Duration.ofSeconds(60)).build();
        assertEquals(Duration.ofSeconds(40), master.workerConfig().pollTimeout());
        assertEquals(Duration.ofSeconds(60), master.leaseTimeout());
        IllegalArgumentException alone = assertThrows(IllegalArgumentException.class, () -> s.master("memory://", Set.of()).build());
        assertTrue(alone.getMessage().contains("leaseTimeout must be longer than pollTimeout"), alone.getMessage());
    }

    @Test
    void environmentVariableNamesFollowTheKeys() {
        assertEquals("BINOMIC_BROKER_URL", Settings.envName("broker.url"));
        assertEquals(Settings.BROKER_URL_ENV, Settings.envName("broker.url"));
        assertEquals("BINOMIC_BROKER_DEAD_LETTER_MAX_AGE", Settings.envName("broker.deadLetterMaxAge"));
        assertEquals("BINOMIC_TASK_BACKOFF_BASE", Settings.envName("task.backoff.base"));
        assertEquals("BINOMIC_MASTER_JVM_OPTIONS", Settings.envName("master.jvmOptions"));
    }

    @Test
    void whatTheMasterWritesTheWorkerReadsBackUnchangedAndOnlyItsUserCanRead() throws Exception {
        BrokerConfig broker = BrokerConfig.builder().url("redis://u:p@h:1/3").password("pw").keyPrefix("k")
                .options(Map.of("redisson.config", "/x.yaml")).maxPayloadBytes(99).deadLetterMaxAge(Duration.ofHours(5)).build();
        TaskDefaults tasks = TaskDefaults.builder().maxAttempts(9).backoff(Backoff.fixed(Duration.ofMillis(1500)).withJitter(0.1))
                .staleAfter(Duration.ofSeconds(30)).build();
        WorkerConfig worker = WorkerConfig.builder().queues("a", "b").concurrency(3).build();
        Path file = dir.resolve("worker.conf");
        Settings.write(file, broker, tasks, worker);

        Settings read = Settings.ofFile(file);
        assertEquals(broker, read.broker("unused://"));
        assertEquals(tasks, read.taskDefaults());
        assertEquals(worker, read.worker());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));

        WorkerConfig tasksQueues = WorkerConfig.builder().concurrency(3).build(); // no queues: the tasks' queues
        Settings.write(file, broker, tasks, tasksQueues);
        assertEquals(tasksQueues, Settings.ofFile(file).worker(), "an empty queue list is refused in a file: it is left out");
    }

    @Test
    void badValuesNameTheKeyAndWhereTheyCameFrom() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Settings.parse("worker.concurrency = many\n", "b.conf").worker());
        assertEquals("b.conf line 1: worker.concurrency must be a whole number, was 'many'", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Settings.parse("\ntask.timeout = soon\n", "b.conf").taskDefaults());
        assertEquals("b.conf line 2: task.timeout must be a duration such as 500ms, 5s, 2m, 1h, 14d or PT5S, was 'soon'",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Settings.parse("worker.concurrency = 0\n", "b.conf").worker());
        assertEquals("concurrency must be >= 1, was 0 (worker.concurrency from b.conf line 1)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Settings.parse("just words\n", "b.conf"));
        assertEquals("b.conf line 1: expected 'key = value', was 'just words'", e.getMessage());
    }

    /**
     * Found by an outside check: an empty worker.queues in the file meant every queue (where
     * --queues '' was refused), and a name left out between two commas was silently dropped.
     */
    @Test
    void anEmptyQueueListOrAnEmptyNameInItIsRefusedNamingTheKeyAndLine() {
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> Settings.parse("worker.queues =\n", "app.conf").worker());
        assertEquals("app.conf line 1: worker.queues is empty: list names separated by commas, or leave worker.queues out",
                empty.getMessage());
        IllegalArgumentException gap = assertThrows(IllegalArgumentException.class,
                () -> Settings.parse("worker.queues = a,,b\n", "app.conf").worker());
        assertEquals("app.conf line 1: worker.queues has an empty name in 'a,,b': list names separated by commas, or leave"
                + " worker.queues out", gap.getMessage());
    }

    @Test
    void aMistypedKeyOfTheFileIsRefusedNamingTheClosestSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Settings.parse("worker.concurency = 4\n", "app.conf"));
        assertEquals("app.conf line 1: unknown setting 'worker.concurency'; did you mean 'worker.concurrency'?; the settings are"
                + " listed in module-info-docs/configuration.md", e.getMessage());
    }

    @Test
    void aMistypedBinomicVariableIsWarnedAboutNamingTheClosestOneAndOthersAreLeftAlone() {
        Map<String, String> env = Map.of("BINOMIC_WORKER_CONCURENCY", "4", "BINOMIC_EVICTION_ALLOWD", "allkeys-lru",
                "BINOMIC_WORKER_CONCURRENCY", "8", "BINOMIC_BROKER_OPTION_EVICTION_ALLOWED", "allkeys-lru",
                "BINOMIC_MODULE_PATH", "/opt/app/lib", "BINOMIC_CONFIG", "/etc/binomic.conf", "PATH", "/usr/bin");

        List<String> warnings = Settings.unknownVariables(env);

        assertEquals(2, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).startsWith("environment variable BINOMIC_EVICTION_ALLOWD is not a Binomic setting and is ignored"
                + " (a broker option is BINOMIC_BROKER_OPTION_<NAME>, e.g. BINOMIC_BROKER_OPTION_EVICTION_ALLOWED;"), warnings.get(0));
        assertTrue(warnings.get(1).startsWith("environment variable BINOMIC_WORKER_CONCURENCY is not a Binomic setting and is ignored;"
                + " did you mean 'BINOMIC_WORKER_CONCURRENCY'?"), warnings.get(1));
        assertEquals(Optional.of("8"), Settings.defaults().withEnvironment(env).value("worker.concurrency"), "known ones still apply");
    }

    @Test
    void aBinomicSystemPropertyBinomicDoesNotReadIsRefusedNamingWhereTheSettingGoes() {
        Map<String, String> properties = Map.of("binomic.broker.url", "redis://127.0.0.1:6411", "binomic.worker.aotcache", "none",
                "binomic.worker.aotCache", "none", "java.home", "/opt/jdk");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Settings.load(Optional.empty(), Map.of(), properties));

        assertEquals("system property binomic.broker.url is not read: Binomic takes broker.url from --broker, the environment"
                + " variable BINOMIC_BROKER_URL or a --config file line 'broker.url = VALUE'; remove -Dbinomic.broker.url;"
                + " system property binomic.worker.aotcache is not read by Binomic; did you mean 'binomic.worker.aotCache'? (the only"
                + " system property it reads is binomic.worker.aotCache; settings go in a --config file, BINOMIC_* variables or"
                + " flags: module-info-docs/configuration.md); remove -Dbinomic.worker.aotcache", e.getMessage());
        assertEquals(Optional.empty(), Settings.load(Optional.empty(), Map.of(), Map.of("binomic.worker.aotCache", "none"))
                .value("broker.url"), "the one property Binomic reads is no setting");
    }
}
