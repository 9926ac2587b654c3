package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.internal.cli.ClosestName;
import io.binomic.core.internal.process.Settings;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code binomic.*} property of each field of {@link BinomicProperties}, read from the class itself so that
 * every property is covered, and the names other parts of Binomic give the same settings: the builders' fields
 * ({@code WorkerConfig.pollTimeout}, {@code pollTimeout}, {@code backoff.jitter}), which their messages name, and
 * the keys of the {@code binomic} command ({@code task.maxAttempts}), which its environment variables spell.
 */
final class PropertyNames {
    /** Each property's field path ({@code worker.pollTimeout}) and its name ({@code binomic.worker.poll-timeout}). */
    private static final Map<String, String> PROPERTIES = collect();
    /** The path of each builder's fields among the properties' field paths. */
    private static final Map<String, String> SECTIONS = Map.of("BinomicConfig", "", "BrokerConfig", "broker.",
            "WorkerConfig", "worker.", "TaskDefaults", "taskDefaults.");
    /** The {@code binomic} command's settings sections, as sections of the properties. */
    private static final Map<String, String> SETTING_SECTIONS = Map.of("broker", "broker", "worker", "worker", "task", "taskDefaults");
    private static final String BOOT_OPTIONS = "binomic.broker.options.";
    private static final Pattern BUILDER_FIELD = Pattern.compile("\\b(BinomicConfig|BrokerConfig|WorkerConfig|TaskDefaults)\\.(\\w+)(?:\\(\\.\\.\\.\\))?");
    private static final Pattern BROKER_OPTION = Pattern.compile("BrokerConfig option ([\\w.]+)");
    /**
     * A field as a message names it: a Java name, alone or dotted ({@code leaseTimeout}, {@code backoff.cap}), not
     * part of a longer name, a URL, a property or a quoted value.
     */
    private static final Pattern FIELD = Pattern.compile("(?<![\\w.\\-/:$'\"])[a-z][A-Za-z0-9]*+(?:\\.[a-z][A-Za-z0-9]*+)*+(?![\\w\\-'\"])");
    /** A plain word is a field only as the subject of a check's message ({@code concurrency must be >= 1}). */
    private static final Pattern LEADING_WORD = Pattern.compile("^([a-z]+)(?= (?:\\([^)]*\\) |'[^']*' )?(?:must|is|has) )");

    private PropertyNames() { }

    /** Each property's field path ({@code worker.pollTimeout}) and its name. */
    static Map<String, String> byField() { return Collections.unmodifiableMap(PROPERTIES); }

    /** Whether {@code name} is a property, or a key of a map property ({@code binomic.broker.options.wait.replicas}). */
    static boolean isProperty(String name) {
        return PROPERTIES.containsValue(name) || name.startsWith(BOOT_OPTIONS) && name.length() > BOOT_OPTIONS.length();
    }

    /** The property fewest edits from {@code typed}, when at most a third of its letters differ. */
    static Optional<String> closest(String typed) { return ClosestName.to(typed, PROPERTIES.values()); }

    /**
     * {@code message} with the builders' names of fields replaced by the properties that set them: a builder's
     * qualified name ({@code BinomicConfig.payloadCodec}), a broker option, any camel-case or dotted field name
     * one property has ({@code pollTimeout}, {@code backoff.jitter}), and a plain word that is the subject
     * ({@code concurrency must ...}).
     */
    static String inPropertyNames(String message) {
        String out = BROKER_OPTION.matcher(message).replaceAll(m -> Matcher.quoteReplacement(BOOT_OPTIONS + m.group(1)));
        out = BUILDER_FIELD.matcher(out).replaceAll(m -> Matcher.quoteReplacement(
                of(SECTIONS.get(m.group(1)) + m.group(2)).orElse("binomic." + SECTIONS.get(m.group(1)) + kebab(m.group(2)))));
        out = FIELD.matcher(out).replaceAll(m -> {
            String name = m.group();
            boolean javaName = !name.startsWith("binomic.") && (name.contains(".") || !name.equals(name.toLowerCase(Locale.ROOT)));
            return Matcher.quoteReplacement(javaName ? named(name).orElse(name) : name);
        });
        Matcher leading = LEADING_WORD.matcher(out);
        return leading.find() ? named(leading.group(1)).map(p -> p + leading.replaceFirst("")).orElse(out) : out;
    }

    /** The property of the field path {@code path} ({@code worker.pollTimeout}). */
    static Optional<String> of(String path) { return Optional.ofNullable(PROPERTIES.get(path)); }

    /** The one property whose field path is {@code name} or ends with it; none when no or several properties have it. */
    private static Optional<String> named(String name) {
        List<String> matching = PROPERTIES.entrySet().stream().filter(e -> e.getKey().equals(name) || e.getKey().endsWith("." + name))
                .map(Map.Entry::getValue).toList();
        return matching.size() == 1 ? Optional.of(matching.getFirst()) : Optional.empty();
    }

    /**
     * The environment variables of each property as Spring Boot reads them ({@code BINOMIC_WORKER_CONCURRENCY}
     * for {@code binomic.worker.concurrency}), and of a map property its prefix ({@code BINOMIC_BROKER_OPTIONS}).
     * Boot reads a dash as nothing or as {@code _}: {@code BINOMIC_WORKER_LEASETIMEOUT} and
     * {@code BINOMIC_WORKER_LEASE_TIMEOUT} both set {@code binomic.worker.lease-timeout}.
     */
    static Set<String> environmentVariables() {
        Set<String> out = new TreeSet<>();
        PROPERTIES.values().forEach(p -> {
            out.add(environmentVariable(p));
            out.add(p.replace('-', '_').replace('.', '_').toUpperCase(Locale.ROOT));
        });
        return out;
    }

    /** The environment variable Spring Boot reads for {@code property}: {@code binomic.task-defaults.max-attempts} is {@code BINOMIC_TASKDEFAULTS_MAXATTEMPTS}. */
    static String environmentVariable(String property) {
        return property.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /**
     * The property of the {@code binomic} command's setting {@code key} ({@code task.maxAttempts} is
     * {@code binomic.task-defaults.max-attempts}); none for a setting of the master alone. Where the key's name is
     * shorter than the field's, the field is the one of its section whose name ends with it: {@code broker.id} is
     * {@code brokerId}, {@code task.timeout} is {@code taskTimeout}.
     */
    static Optional<String> ofSetting(String key) {
        if (key.startsWith(Settings.OPTION_PREFIX)) {
            return Optional.of(BOOT_OPTIONS + key.substring(Settings.OPTION_PREFIX.length()));
        }
        int dot = key.indexOf('.');
        String section = dot < 0 ? null : SETTING_SECTIONS.get(key.substring(0, dot));
        if (section == null) {
            return Optional.empty();
        }
        String path = section + key.substring(dot);
        if (PROPERTIES.containsKey(path)) {
            return Optional.of(PROPERTIES.get(path));
        }
        int last = path.lastIndexOf('.');
        String parent = path.substring(0, last + 1);
        String name = path.substring(last + 1);
        String suffix = Character.toUpperCase(name.charAt(0)) + name.substring(1);
        List<String> matching = PROPERTIES.entrySet().stream()
                .filter(e -> e.getKey().startsWith(parent) && e.getKey().indexOf('.', parent.length()) < 0 && e.getKey().endsWith(suffix))
                .map(Map.Entry::getValue).toList();
        return matching.size() == 1 ? Optional.of(matching.getFirst()) : Optional.empty();
    }

    private static Map<String, String> collect() {
        Map<String, String> out = new LinkedHashMap<>();
        collect(BinomicProperties.class, "", "binomic.", out);
        return out;
    }

    private static void collect(Class<?> type, String path, String prefix, Map<String, String> out) {
        for (Field f : type.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            String property = prefix + kebab(f.getName());
            if (f.getType().getEnclosingClass() == BinomicProperties.class) {
                collect(f.getType(), path + f.getName() + ".", property + ".", out);
            } else {
                out.put(path + f.getName(), property);
            }
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }
}
