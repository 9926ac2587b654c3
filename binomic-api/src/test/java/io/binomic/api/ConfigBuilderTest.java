package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The configuration types can gain settings without breaking callers (no public constructor, only
 * builders), and each builder takes a setting once: a second call names the field and both values.
 */
class ConfigBuilderTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(classes = {BinomicConfig.class, BrokerConfig.class, WorkerConfig.class, TaskDefaults.class, Backoff.class})
    void configurationTypesAreFinalClassesWithoutPublicConstructor(Class<?> type) {
        assertEquals(0, type.getConstructors().length, type + " has a public constructor");
        assertFalse(type.isRecord(), type + " is a record: its canonical constructor would be public API");
        assertTrue(Modifier.isFinal(type.getModifiers()), type + " is not final");
        Class<?> builder = Stream.of(type.getClasses()).filter(c -> c.getSimpleName().equals("Builder")).findFirst().orElseThrow();
        assertEquals(0, builder.getConstructors().length, builder + " has a public constructor");
    }

    static Stream<Arguments> settingsGivenTwice() {
        return Stream.of(
                twice("url", "url is set twice (memory://, then redis://h:6379)",
                        () -> BrokerConfig.builder().url("memory://").url("redis://h:6379")),
                twice("brokerId", "brokerId is set twice (redis, then memory)",
                        () -> BrokerConfig.builder().brokerId("redis").brokerId("memory")),
                twice("username", "username is set twice (a, then b)", () -> BrokerConfig.builder().username("a").username("b")),
                twice("database", "database is set twice (1, then 2)", () -> BrokerConfig.builder().database(1).database(2)),
                twice("connectTimeout", "connectTimeout is set twice (PT1S, then PT2S)",
                        () -> BrokerConfig.builder().connectTimeout(Duration.ofSeconds(1)).connectTimeout(Duration.ofSeconds(2))),
                twice("commandTimeout", "commandTimeout is set twice (PT1S, then PT2S)",
                        () -> BrokerConfig.builder().commandTimeout(Duration.ofSeconds(1)).commandTimeout(Duration.ofSeconds(2))),
                twice("keyPrefix", "keyPrefix is set twice (a, then b)", () -> BrokerConfig.builder().keyPrefix("a").keyPrefix("b")),
                twice("maxPayloadBytes", "maxPayloadBytes is set twice (10, then 20)",
                        () -> BrokerConfig.builder().maxPayloadBytes(10).maxPayloadBytes(20)),
                twice("deadLetterMaxCount", "deadLetterMaxCount is set twice (10, then 20)",
                        () -> BrokerConfig.builder().deadLetterMaxCount(10).deadLetterMaxCount(20)),
                twice("deadLetterMaxAge", "deadLetterMaxAge is set twice (PT24H, then PT48H)",
                        () -> BrokerConfig.builder().deadLetterMaxAge(Duration.ofDays(1)).deadLetterMaxAge(Duration.ofDays(2))),
                twice("options", "options is set twice ({a=1}, then {b=2})",
                        () -> BrokerConfig.builder().options(Map.of("a", "1")).options(Map.of("b", "2"))),
                twice("queues", "queues is set twice ([a], then [b, c])", () -> WorkerConfig.builder().queues("a").queues(List.of("b", "c"))),
                twice("concurrency", "concurrency is set twice (5, then 8)", () -> WorkerConfig.builder().concurrency(5).concurrency(8)),
                twice("shutdownGrace", "shutdownGrace is set twice (PT1S, then PT2S)",
                        () -> WorkerConfig.builder().shutdownGrace(Duration.ofSeconds(1)).shutdownGrace(Duration.ofSeconds(2))),
                twice("leaseTimeout", "leaseTimeout is set twice (PT1S, then PT2S)",
                        () -> WorkerConfig.builder().leaseTimeout(Duration.ofSeconds(1)).leaseTimeout(Duration.ofSeconds(2))),
                twice("pollTimeout", "pollTimeout is set twice (PT1S, then PT2S)",
                        () -> WorkerConfig.builder().pollTimeout(Duration.ofSeconds(1)).pollTimeout(Duration.ofSeconds(2))),
                twice("reclaimInterval", "reclaimInterval is set twice (PT1S, then PT2S)",
                        () -> WorkerConfig.builder().reclaimInterval(Duration.ofSeconds(1)).reclaimInterval(Duration.ofSeconds(2))),
                twice("consumerName", "consumerName is set twice (a, then b)", () -> WorkerConfig.builder().consumerName("a").consumerName("b")),
                twice("maxAttempts", "maxAttempts is set twice (3, then 5)", () -> TaskDefaults.builder().maxAttempts(3).maxAttempts(5)),
                twice("taskTimeout", "taskTimeout is set twice (PT1S, then PT2S)",
                        () -> TaskDefaults.builder().taskTimeout(Duration.ofSeconds(1)).taskTimeout(Duration.ofSeconds(2))),
                twice("backoff", "backoff is set twice (" + Backoff.DEFAULT + ", then " + Backoff.fixed(Duration.ofSeconds(1)) + ")",
                        () -> TaskDefaults.builder().backoff(Backoff.DEFAULT).backoff(Backoff.fixed(Duration.ofSeconds(1)))),
                twice("staleAfter", "staleAfter is set twice (PT1M, then null)",
                        () -> TaskDefaults.builder().staleAfter(Duration.ofMinutes(1)).staleAfter(null)),
                twice("backoff.base", "backoff.base is set twice (PT1S, then PT2S)",
                        () -> Backoff.builder().base(Duration.ofSeconds(1)).base(Duration.ofSeconds(2))),
                twice("backoff.factor", "backoff.factor is set twice (2.0, then 3.0)", () -> Backoff.builder().factor(2).factor(3)),
                twice("backoff.cap", "backoff.cap is set twice (PT1M, then PT2M)",
                        () -> Backoff.builder().cap(Duration.ofMinutes(1)).cap(Duration.ofMinutes(2))),
                twice("backoff.jitter", "backoff.jitter is set twice (0.1, then 0.2)", () -> Backoff.builder().jitter(0.1).jitter(0.2)),
                twice("broker", "broker is set twice (" + BrokerConfig.defaults() + ", then "
                                + BrokerConfig.builder().url("redis://h:6379").build() + ")",
                        () -> BinomicConfig.builder().broker(BrokerConfig.defaults()).brokerUrl("redis://h:6379")),
                twice("taskDefaults", "taskDefaults is set twice (" + TaskDefaults.defaults() + ", then " + TaskDefaults.defaults() + ")",
                        () -> BinomicConfig.builder().taskDefaults(TaskDefaults.defaults()).taskDefaults(TaskDefaults.defaults())),
                twice("worker", "worker is set twice (" + WorkerConfig.defaults() + ", then " + WorkerConfig.defaults() + ")",
                        () -> BinomicConfig.builder().worker(WorkerConfig.defaults()).worker(WorkerConfig.defaults())),
                twice("schedulePeriodicTasks", "schedulePeriodicTasks is set twice (false, then true)",
                        () -> BinomicConfig.builder().schedulePeriodicTasks(false).schedulePeriodicTasks(true)),
                twice("payloadCodec", "payloadCodec is set twice (jackson, then json-jdk)",
                        () -> BinomicConfig.builder().payloadCodec("jackson").payloadCodec("json-jdk")));
    }

    private static Arguments twice(String field, String message, Runnable calls) {
        return Arguments.of(field, message, Named.of(field, calls));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("settingsGivenTwice")
    void settingGivenTwiceIsRejectedNamingTheFieldAndBothValues(String field, String message, Runnable calls) {
        var e = assertThrows(IllegalArgumentException.class, calls::run);
        assertEquals(message + "; set it once", e.getMessage());
    }

    @Test
    void sameValueTwiceIsStillASecondCall() {
        var e = assertThrows(IllegalArgumentException.class, () -> WorkerConfig.builder().concurrency(5).concurrency(5));
        assertEquals("concurrency is set twice (5, then 5); set it once", e.getMessage());
    }

    @Test
    void passwordsGivenTwiceAreNotPrinted() {
        var password = assertThrows(IllegalArgumentException.class, () -> BrokerConfig.builder().password("s3cret").password("hunter2"));
        assertEquals("password is set twice (****, then ****); set it once", password.getMessage());
        var url = assertThrows(IllegalArgumentException.class,
                () -> BrokerConfig.builder().url("redis://app:s3cret@a:6379").url("redis://app:hunter2@b:6379"));
        assertEquals("url is set twice (redis://app:****@a:6379, then redis://app:****@b:6379); set it once", url.getMessage());
    }

    @Test
    void toBuilderCopiesEverySettingAndLetsEachBeReplacedOnce() {
        BrokerConfig broker = BrokerConfig.builder().url("redis://h:6379").brokerId("redis").username("u").password("p").database(2)
                .connectTimeout(Duration.ofSeconds(3)).commandTimeout(Duration.ofSeconds(4)).keyPrefix("shop").maxPayloadBytes(99)
                .deadLetterMaxCount(7).deadLetterMaxAge(Duration.ofDays(1)).options(Map.of("k", "v")).build();
        assertEquals(broker, broker.toBuilder().build());
        BrokerConfig otherPrefix = broker.toBuilder().keyPrefix("other").build();
        assertEquals("other", otherPrefix.keyPrefix());
        assertEquals(broker.url(), otherPrefix.url());
        var e = assertThrows(IllegalArgumentException.class, () -> broker.toBuilder().keyPrefix("a").keyPrefix("b"));
        assertEquals("keyPrefix is set twice (a, then b); set it once", e.getMessage());

        WorkerConfig worker = WorkerConfig.builder().queues("a", "b").concurrency(3).shutdownGrace(Duration.ZERO)
                .leaseTimeout(Duration.ofSeconds(9)).pollTimeout(Duration.ofSeconds(2)).reclaimInterval(Duration.ofSeconds(4))
                .consumerName("me").build();
        assertEquals(worker, worker.toBuilder().build());
        assertEquals(Optional.empty(), worker.toBuilder().consumerName(null).build().consumerName());

        TaskDefaults tasks = TaskDefaults.builder().maxAttempts(9).taskTimeout(Duration.ofSeconds(8))
                .backoff(Backoff.fixed(Duration.ofSeconds(1))).staleAfter(Duration.ofMinutes(5)).build();
        assertEquals(tasks, tasks.toBuilder().build());
        assertEquals(Optional.empty(), tasks.toBuilder().staleAfter(null).build().staleAfter());

        BinomicConfig config = BinomicConfig.builder().broker(broker).taskDefaults(tasks).worker(worker).schedulePeriodicTasks(false)
                .payloadCodec("jackson").build();
        assertEquals(config, config.toBuilder().build());
        assertEquals(BinomicConfig.JDK_JSON_CODEC, config.toBuilder().payloadCodec(BinomicConfig.JDK_JSON_CODEC).build().payloadCodec());

        Backoff backoff = Backoff.builder().base(Duration.ofSeconds(2)).factor(3).cap(Duration.ofMinutes(1)).jitter(0.5).build();
        assertEquals(backoff, backoff.toBuilder().build());
        assertEquals(0.1, backoff.withJitter(0.1).jitter());
        assertEquals(backoff, backoff.withJitter(0.1).withJitter(0.5));
    }

    @Test
    void toBuilderValidatesTheReplacement() {
        var e = assertThrows(IllegalArgumentException.class, () -> WorkerConfig.defaults().toBuilder().pollTimeout(Duration.ofSeconds(40)).build());
        assertTrue(e.getMessage().startsWith("pollTimeout (PT40S) must be shorter than leaseTimeout (PT30S)"), e.getMessage());
        // a copied period is a default: it follows a shorter lease instead of making the copy invalid
        assertEquals(Duration.ofMillis(250), WorkerConfig.defaults().toBuilder().leaseTimeout(Duration.ofMillis(500)).build().pollTimeout());
    }

    @Test
    void equalsAndHashCodeAreByValue() {
        assertEquals(BinomicConfig.defaults(), BinomicConfig.builder().build());
        assertEquals(BinomicConfig.defaults().hashCode(), BinomicConfig.builder().build().hashCode());
        assertNotEquals(BinomicConfig.defaults(), BinomicConfig.builder().schedulePeriodicTasks(false).build());
        assertEquals(BrokerConfig.builder().url("redis://h:6379").build(), BrokerConfig.builder().url("redis://h:6379").build());
        assertNotEquals(BrokerConfig.builder().password("a").build(), BrokerConfig.builder().password("b").build());
        assertEquals(WorkerConfig.builder().queues("q").build(), WorkerConfig.builder().queues(List.of("q")).build());
        assertEquals(WorkerConfig.builder().queues("q").build().hashCode(), WorkerConfig.builder().queues(List.of("q")).build().hashCode());
        assertEquals(TaskDefaults.defaults(), TaskDefaults.builder().backoff(Backoff.DEFAULT).build());
        assertEquals(Backoff.DEFAULT, Backoff.exponential(Duration.ofMillis(1500), 2, Duration.ofSeconds(30)));
        assertEquals(Backoff.DEFAULT.hashCode(), Backoff.exponential(Duration.ofMillis(1500), 2, Duration.ofSeconds(30)).hashCode());
        assertEquals(Backoff.fixed(Duration.ofSeconds(5)), Backoff.builder().base(Duration.ofSeconds(5)).factor(1).cap(Duration.ofSeconds(5)).build());
        assertNotEquals(Backoff.DEFAULT, Backoff.DEFAULT.withJitter(0.2));
    }

    @Test
    void toStringReadsLikeARecordsAndHidesThePassword() {
        assertEquals("Backoff[base=PT1.5S, factor=2.0, cap=PT30S, jitter=0.0]", Backoff.DEFAULT.toString());
        assertEquals("TaskDefaults[maxAttempts=3, taskTimeout=PT10M, backoff=" + Backoff.DEFAULT + ", staleAfter=Optional.empty]",
                TaskDefaults.defaults().toString());
        assertEquals("WorkerConfig[queues=[], concurrency=5, shutdownGrace=PT10S, leaseTimeout=PT30S, pollTimeout=PT1S,"
                + " reclaimInterval=PT10S, consumerName=Optional.empty]", WorkerConfig.defaults().toString());
        BrokerConfig broker = BrokerConfig.builder().url("redis://app:s3cret@h:6379").password("hunter2").build();
        assertEquals("BrokerConfig[url=redis://app:****@h:6379, brokerId=Optional.empty, username=Optional.empty,"
                + " password=Optional[****], database=0, connectTimeout=PT5S, commandTimeout=PT5S, keyPrefix=binomic,"
                + " maxPayloadBytes=524288, deadLetterMaxCount=100000, deadLetterMaxAge=PT336H, options={}]", broker.toString());
        String config = BinomicConfig.builder().broker(broker).build().toString();
        assertTrue(config.startsWith("BinomicConfig[broker=" + broker + ", taskDefaults=" + TaskDefaults.defaults()), config);
        assertTrue(config.endsWith(", schedulePeriodicTasks=true, payloadCodec=json-jdk]"), config);
        assertFalse(config.contains("s3cret") || config.contains("hunter2"), config);
    }

    @Test
    void toStringHidesTheValueOfAnOptionNamedAsASecret() {
        BrokerConfig broker = BrokerConfig.builder().url("rediss://h:6379").options(Map.of("tls.truststore.password", "changeit",
                "tls.truststore", "/etc/trust.p12", "sentinel.Secret", "x1", "api.token", "t0k", "wait.replicas", "1")).build();
        assertTrue(broker.toString().endsWith(", options={api.token=****, sentinel.Secret=****, tls.truststore=/etc/trust.p12,"
                + " tls.truststore.password=****, wait.replicas=1}]"), broker.toString());
        var twice = assertThrows(IllegalArgumentException.class, () -> BrokerConfig.builder()
                .options(Map.of("tls.truststore.password", "changeit")).options(Map.of("tls.truststore.password", "other")));
        assertFalse(twice.getMessage().contains("changeit") || twice.getMessage().contains("other"), twice.getMessage());
    }
}
