package io.binomic.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import io.binomic.core.internal.memory.MemorySchedulerProvider;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Broker and scheduler selection is deterministic and its failures list every provider found. */
class ProvidersTest {

    record FakeProvider(String id, Set<String> schemes) implements BrokerProvider {
        @Override
        public Broker create(BrokerConfig config) {
            throw new UnsupportedOperationException();
        }
    }

    private static final BrokerProvider MEMORY = new MemoryBrokerProvider();
    private static final BrokerProvider REDIS = new FakeProvider("redis", Set.of("redis", "rediss"));
    private static final BrokerProvider OTHER_REDIS = new FakeProvider("redis-cluster", Set.of("redis"));

    private static BrokerProvider select(String url, String id, BrokerProvider... found) {
        BrokerConfig.Builder config = BrokerConfig.builder().url(url);
        if (id != null) {
            config.brokerId(id);
        }
        return Providers.selectBroker(config.build(), new Providers.Loaded<>(List.of(found), List.of()));
    }

    @Test
    void urlSchemeSelectsItsProvider() {
        assertSame(REDIS, select("rediss://cache:6380", null, MEMORY, REDIS));
        assertSame(MEMORY, select("memory://", null, MEMORY, REDIS));
    }

    @Test
    void anOptionTheBrokerDoesNotReadIsRefusedNamingTheClosestOne() {
        BrokerConfig config = BrokerConfig.builder().url("memory://").options(Map.of("priority.fairnes", "3")).build();
        var e = assertThrows(IllegalArgumentException.class,
                () -> Providers.selectBroker(config, new Providers.Loaded<>(List.of(MEMORY), List.of())));
        assertEquals("BrokerConfig option priority.fairnes is not an option of the memory broker; did you mean"
                + " 'priority.fairness'? Its options are priority.fairness", e.getMessage());
        var both = assertThrows(UnknownBrokerOptionException.class, () -> Providers.selectBroker(BrokerConfig.builder().url("memory://")
                .options(Map.of("priority.fairnes", "3", "colour", "red")).build(), new Providers.Loaded<>(List.of(MEMORY), List.of())));
        assertEquals("BrokerConfig options colour and priority.fairnes (did you mean 'priority.fairness'?) are not options of the memory"
                + " broker; its options are priority.fairness", both.getMessage(), "every one at once, not the first alone");
        assertEquals(List.of("colour", "priority.fairnes"), both.options());
        BrokerConfig unchecked = BrokerConfig.builder().url("redis://localhost").options(Map.of("anything", "1")).build();
        assertSame(REDIS, Providers.selectBroker(unchecked, new Providers.Loaded<>(List.of(REDIS), List.of())),
                "a provider that does not list its options is given them all");
    }

    @Test
    void explicitIdWinsOverAnAmbiguousScheme() {
        assertSame(OTHER_REDIS, select("redis://localhost", "redis-cluster", MEMORY, REDIS, OTHER_REDIS));
    }

    @Test
    void missingProviderErrorNamesTheFixAndListsWhatWasFound() {
        var e = assertThrows(ProviderNotFoundException.class, () -> select("redis://localhost:6379", null, MEMORY));
        assertEquals("""
                no broker provider for URL scheme 'redis': add io.binomic:binomic-redis (module io.binomic.redis) to the module path or classpath. Providers found:
                  memory (schemes [memory]): io.binomic.core.internal.memory.MemoryBrokerProvider in module io.binomic.core""",
                e.getMessage());
        assertEquals(1, e.found().size());
    }

    @Test
    void aMistypedSchemeOrIdIsNamedWithTheOneMeant() {
        var scheme = assertThrows(ProviderNotFoundException.class, () -> select("redsi://localhost:6379", null, MEMORY, REDIS));
        assertTrue(scheme.getMessage().startsWith("no broker provider for URL scheme 'redsi' (did you mean 'redis'?): use memory://"),
                scheme.getMessage());
        var id = assertThrows(ProviderNotFoundException.class, () -> select("redis://localhost:6379", "memroy", MEMORY, REDIS));
        assertTrue(id.getMessage().startsWith("no broker provider for id 'memroy' (did you mean 'memory'?)"), id.getMessage());
        var far = assertThrows(ProviderNotFoundException.class, () -> select("http://localhost", null, MEMORY, REDIS));
        assertTrue(far.getMessage().startsWith("no broker provider for URL scheme 'http': use memory://"), far.getMessage());
    }

    @Test
    void ambiguousSchemeIsAnErrorListingEveryCandidate() {
        var e = assertThrows(ProviderNotFoundException.class, () -> select("redis://x", null, REDIS, OTHER_REDIS, MEMORY));
        String message = e.getMessage();
        assertEquals("several broker providers match URL scheme 'redis'; choose one with BrokerConfig.brokerId(...). Providers found:",
                message.lines().findFirst().orElseThrow());
        assertEquals(4, message.lines().count(), message);
    }

    @Test
    void brokenProvidersAreReportedWithoutHidingTheOthers() {
        var loaded = new Providers.Loaded<>(List.of(MEMORY), List.of("  (broken BrokerProvider: com.acme.Bad: Provider not found)"));
        var e = assertThrows(ProviderNotFoundException.class,
                () -> Providers.selectBroker(BrokerConfig.builder().url("acme://x").build(), loaded));
        assertEquals(3, e.getMessage().lines().count(), e.getMessage());
        assertSame(MEMORY, Providers.selectBroker(BrokerConfig.defaults(), loaded));
    }

    @Test
    void theModulePathProvidesTheMemoryBroker() {
        var loaded = Providers.load(BrokerProvider.class, ServiceLoader.load(BrokerProvider.class));
        assertEquals(List.of("memory"), loaded.providers().stream().map(BrokerProvider::id).toList());
    }

    // ---- schedulers: selected by the same rules, and a scheduler serves only its own kind of broker ----

    record FakeSchedulerProvider(String id, Set<String> schemes) implements SchedulerProvider {
        @Override
        public Class<? extends Broker> brokerType() {
            return Broker.class;
        }

        @Override
        public Scheduler create(Broker broker) {
            throw new UnsupportedOperationException();
        }
    }

    private static final SchedulerProvider MEMORY_SCHEDULER = new MemorySchedulerProvider();
    private static final SchedulerProvider REDIS_SCHEDULER = new FakeSchedulerProvider("redis", Set.of("redis", "rediss"));

    @Test
    void theBrokerUrlSelectsTheSchedulerProviderOfItsKind() {
        var loaded = new Providers.Loaded<>(List.of(REDIS_SCHEDULER, MEMORY_SCHEDULER), List.<String>of());
        assertSame(REDIS_SCHEDULER, Providers.selectScheduler(BrokerConfig.builder().url("rediss://cache:6380").build(), loaded));
        assertSame(MEMORY_SCHEDULER, Providers.selectScheduler(BrokerConfig.defaults(), loaded));
        assertSame(REDIS_SCHEDULER, Providers.selectScheduler(BrokerConfig.builder().url("redis://x").brokerId("redis").build(), loaded));
    }

    @Test
    void aMissingSchedulerProviderIsAnErrorListingWhatWasFoundBrokenOnesIncluded() {
        var loaded = new Providers.Loaded<>(List.of(MEMORY_SCHEDULER),
                List.of("  (broken SchedulerProvider: com.acme.Bad: Provider not found)"));
        var e = assertThrows(ProviderNotFoundException.class,
                () -> Providers.selectScheduler(BrokerConfig.builder().url("redis://localhost").build(), loaded));
        assertEquals("""
                no scheduler provider for URL scheme 'redis': add io.binomic:binomic-redis (module io.binomic.redis) to the module path or classpath. Providers found:
                  memory (schemes [memory]): io.binomic.core.internal.memory.MemorySchedulerProvider in module io.binomic.core
                  (broken SchedulerProvider: com.acme.Bad: Provider not found)""", e.getMessage());
        assertSame(MEMORY_SCHEDULER, Providers.selectScheduler(BrokerConfig.defaults(), loaded), "the broken one hides nothing");
    }

    @Test
    void theMemorySchedulerServesOnlyTheMemoryBroker() {
        Broker memory = MEMORY.create(BrokerConfig.defaults());
        Broker other = (Broker) java.lang.reflect.Proxy.newProxyInstance(Broker.class.getClassLoader(), new Class<?>[] {Broker.class},
                (proxy, method, args) -> method.isDefault() ? java.lang.reflect.InvocationHandler.invokeDefault(proxy, method, args) : null);
        assertEquals(MemoryScheduler.class, Providers.createScheduler(MEMORY_SCHEDULER, memory).getClass());
        var e = assertThrows(IllegalArgumentException.class, () -> Providers.createScheduler(MEMORY_SCHEDULER, other));
        assertTrue(e.getMessage().startsWith("the memory scheduler keeps its deferred messages in the store of a "
                + MemoryBroker.class.getName() + ", so it cannot serve the broker "), e.getMessage());
    }

    @Test
    void theModulePathProvidesTheMemoryScheduler() {
        var loaded = Providers.load(SchedulerProvider.class, ServiceLoader.load(SchedulerProvider.class));
        assertEquals(List.of("memory"), loaded.providers().stream().map(SchedulerProvider::id).toList());
    }
}
