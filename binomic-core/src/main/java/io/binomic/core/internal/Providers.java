package io.binomic.core.internal;

import io.binomic.api.BrokerConfig;
import io.binomic.api.Priority;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.api.spi.TraceContextProvider;
import io.binomic.core.internal.cli.ClosestName;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Deterministic provider selection. An explicit broker id wins, then the URL scheme; zero or
 * several matches fail with a list of every provider found. A provider that fails to load is
 * reported and skipped, so one broken jar does not hide the others; there is never a silent
 * fallback (a queue that drops work is worse than one that refuses to start).
 */
public final class Providers {
    private static final System.Logger LOG = System.getLogger(Providers.class.getName());

    private Providers() { }

    /** Every loadable provider of {@code type}, plus one line per provider that failed to load. */
    public static <T> Loaded<T> load(Class<T> type, ServiceLoader<T> loader) {
        List<T> found = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        var iterator = loader.iterator();
        while (true) {
            try {
                if (!iterator.hasNext()) {
                    break;
                }
                found.add(iterator.next());
            } catch (ServiceConfigurationError e) {
                broken.add("  (broken " + type.getSimpleName() + ": " + e.getMessage() + ")");
                LOG.log(System.Logger.Level.WARNING, "skipping a broken {0}: {1}", type.getSimpleName(), e.getMessage());
            }
        }
        return new Loaded<>(found, broken);
    }

    public record Loaded<T>(List<T> providers, List<String> broken) { }

    public static Broker createBroker(BrokerConfig config) {
        return selectBroker(config, load(BrokerProvider.class, ServiceLoader.load(BrokerProvider.class))).create(config);
    }

    /** Chooses the provider for {@code config} among {@code loaded}. */
    public static BrokerProvider selectBroker(BrokerConfig config, Loaded<BrokerProvider> loaded) {
        BrokerProvider provider = select("broker", config, loaded, BrokerProvider::id, BrokerProvider::schemes);
        optionsOf(provider).ifPresent(known -> checkOptions(config, known));
        return provider;
    }

    /**
     * The options of the broker {@code config} selects, its options left unchecked; none when that broker takes any option.
     *
     * @throws io.binomic.api.ProviderNotFoundException when no broker, or several, match {@code config}
     */
    public static Optional<KnownOptions> brokerOptions(BrokerConfig config) {
        return optionsOf(select("broker", config, load(BrokerProvider.class, ServiceLoader.load(BrokerProvider.class)),
                BrokerProvider::id, BrokerProvider::schemes));
    }

    /** The options a broker reads: its own and the core's ({@link Priority#FAIRNESS_OPTION}), each without a prefix. */
    public record KnownOptions(String brokerId, Set<String> names) {
        public KnownOptions {
            names = Collections.unmodifiableSet(new TreeSet<>(names));
        }

        /** The refusal of {@code option} when it is not one of these. */
        public Optional<UnknownBrokerOptionException> refusal(String option) {
            return refusal(List.of(option));
        }

        /** The refusal of every one of {@code options} that is not one of these, at once, sorted by name. */
        public Optional<UnknownBrokerOptionException> refusal(Collection<String> options) {
            List<String> unknown = options.stream().filter(o -> !names.contains(o)).sorted().toList();
            return unknown.isEmpty() ? Optional.empty() : Optional.of(new UnknownBrokerOptionException(unknown, brokerId, names));
        }
    }

    private static Optional<KnownOptions> optionsOf(BrokerProvider provider) {
        return provider.optionNames().map(own -> {
            Set<String> known = new TreeSet<>(own);
            known.add(Priority.FAIRNESS_OPTION);
            return new KnownOptions(provider.id(), known);
        });
    }

    /** Refuses an option the chosen provider does not read ({@link UnknownBrokerOptionException}). */
    private static void checkOptions(BrokerConfig config, KnownOptions known) {
        known.refusal(config.options().keySet()).ifPresent(e -> { throw e; });
    }

    /**
     * The scheduler {@code provider} creates for {@code broker}: the one place that checks the pair,
     * since a scheduler shares its broker's storage (a retry is stored atomically with the ack). A
     * broker that offers the provider's {@link SchedulerProvider#brokerType() broker type} as a
     * capability (a wrapper) is served through what it offers.
     *
     * @throws IllegalArgumentException when {@code broker} is not of the kind {@code provider} serves
     */
    public static Scheduler createScheduler(SchedulerProvider provider, Broker broker) {
        Class<? extends Broker> served = provider.brokerType();
        Broker own = broker.capability(served).orElseThrow(() -> new IllegalArgumentException("the " + provider.id()
                + " scheduler keeps its deferred messages in the store of a " + served.getName() + ", so it cannot serve the broker "
                + broker.getClass().getName() + ": select the broker and the scheduler with the same URL scheme or broker id, or give"
                + " Binomic.Builder.scheduler(...) the scheduler that belongs with the broker"));
        return provider.create(own);
    }

    /** Chooses the scheduler provider for {@code config} among {@code loaded}, by the rules of {@link #selectBroker}. */
    public static SchedulerProvider selectScheduler(BrokerConfig config, Loaded<SchedulerProvider> loaded) {
        return select("scheduler", config, loaded, SchedulerProvider::id, SchedulerProvider::schemes);
    }

    private static <P> P select(String kind, BrokerConfig config, Loaded<P> loaded, Function<P, String> id,
                                Function<P, Set<String>> schemes) {
        List<P> all = loaded.providers().stream().sorted(Comparator.comparing(id)).toList();
        List<P> matching;
        String wanted;
        if (config.brokerId().isPresent()) {
            wanted = "id '" + config.brokerId().get() + "'";
            matching = all.stream().filter(p -> id.apply(p).equals(config.brokerId().get())).toList();
        } else {
            wanted = "URL scheme '" + config.scheme() + "'";
            matching = all.stream().filter(p -> schemes.apply(p).contains(config.scheme())).toList();
        }
        if (matching.size() == 1) {
            return matching.getFirst();
        }
        List<String> lines = describe(all, p -> id.apply(p) + " (schemes " + new TreeSet<>(schemes.apply(p)) + ")", loaded.broken());
        String listing = lines.isEmpty() ? "  (none)" : String.join("\n", lines);
        if (matching.isEmpty()) {
            // a typo of a served scheme or id ("redsi") is named, so the fix is not sought in the module path
            Optional<String> meant = config.brokerId().isPresent()
                    ? ClosestName.to(config.brokerId().get(), all.stream().map(id).toList())
                    : ClosestName.to(config.scheme(), all.stream().flatMap(p -> schemes.apply(p).stream()).sorted().toList());
            wanted += meant.map(m -> " (did you mean '" + m + "'?)").orElse("");
            String fix = switch (config.scheme()) {
                case "redis", "rediss", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel" -> "add io.binomic:binomic-redis (module io.binomic.redis) to the module path or classpath";
                case "memory" -> "add io.binomic:binomic-core to the module path";
                default -> "use memory://, redis:// or rediss:// in BrokerConfig.url, or add the module of a broker serving this scheme";
            };
            throw new ProviderNotFoundException("no " + kind + " provider for " + wanted + ": " + fix + ". Providers found:\n"
                    + listing, lines);
        }
        throw new ProviderNotFoundException("several " + kind + " providers match " + wanted
                + "; choose one with BrokerConfig.brokerId(...). Providers found:\n" + listing, lines);
    }

    /**
     * The codec with id {@code id} among the providers found. The choice is explicit: a codec is
     * never picked because its module happens to be on the module path.
     */
    public static PayloadCodec selectCodec(String id) {
        return selectCodec(id, load(PayloadCodec.class, ServiceLoader.load(PayloadCodec.class)));
    }

    /** Chooses the codec with id {@code id} among {@code loaded}; none or several fail, listing each one found. */
    public static PayloadCodec selectCodec(String id, Loaded<PayloadCodec> loaded) {
        List<PayloadCodec> all = loaded.providers().stream().sorted(Comparator.comparing(PayloadCodec::id)).toList();
        List<PayloadCodec> matching = all.stream().filter(c -> c.id().equals(id)).toList();
        if (matching.size() == 1) {
            return matching.getFirst();
        }
        List<String> lines = describe(all, PayloadCodec::id, loaded.broken());
        String listing = lines.isEmpty() ? "  (none)" : String.join("\n", lines);
        if (matching.isEmpty()) {
            String fix = id.equals("jackson") ? "add io.binomic:binomic-redis (module io.binomic.redis), which provides it,"
                    : "add the module that provides it,";
            throw new ProviderNotFoundException("no payload codec with id '" + id + "' (BinomicConfig.payloadCodec): " + fix
                    + " or choose one of the codecs found:\n" + listing, lines);
        }
        throw new ProviderNotFoundException("several payload codecs have id '" + id
                + "': remove all but one from the module path. Codecs found:\n" + listing, lines);
    }

    /** Every codec found, by id (the first of several with one id), for decoding what other codecs wrote. */
    public static Map<String, PayloadCodec> codecsById() {
        Map<String, PayloadCodec> byId = new LinkedHashMap<>();
        for (PayloadCodec codec : load(PayloadCodec.class, ServiceLoader.load(PayloadCodec.class)).providers()) {
            byId.putIfAbsent(codec.id(), codec);
        }
        return byId;
    }

    /**
     * The application's trace context provider: the one found, or none. Several are an error
     * listing each, since picking one would attach the wrong tracer's context without a word.
     */
    public static TraceContextProvider selectTraceContextProvider(Loaded<TraceContextProvider> loaded) {
        List<TraceContextProvider> found = loaded.providers();
        if (found.size() <= 1) {
            return found.isEmpty() ? null : found.getFirst();
        }
        List<String> lines = describe(found, p -> "TraceContextProvider", List.of());
        throw new IllegalArgumentException("several TraceContextProviders are on the module path; keep one, or give it with"
                + " Binomic.Builder.traceContextProvider:\n" + String.join("\n", lines));
    }

    /** A line per provider (what it is, its class and module), then the {@code broken} ones. */
    private static <T> List<String> describe(List<T> providers, Function<T, String> what, List<String> broken) {
        List<String> lines = new ArrayList<>();
        for (T p : providers) {
            Module module = p.getClass().getModule();
            lines.add("  " + what.apply(p) + ": " + p.getClass().getName() + " in "
                    + (module.isNamed() ? "module " + module.getName() : "the classpath"));
        }
        lines.addAll(broken);
        return lines;
    }
}
