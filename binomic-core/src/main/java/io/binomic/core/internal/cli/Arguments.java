package io.binomic.core.internal.cli;

import io.binomic.core.internal.process.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The options of one command, parsed against what it declares. Accepts {@code --name value} and
 * {@code --name=value}; anything undeclared (with the declared option it most likely meant), a missing
 * value or a positional word is a {@link UsageException} that says which.
 */
final class Arguments {
    private static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");
    /** A library message's subject, the words before its first "must", when no clause ends before it. */
    private static final Pattern SUBJECT = Pattern.compile("^([^,;:]+?) must ");
    private static final Pattern WORD = Pattern.compile("[A-Za-z]+");
    private static final Pattern JAVA_DURATION = Pattern.compile("\\bDuration\\.of(Millis|Seconds|Minutes|Hours|Days)\\((\\d+)\\)");
    private static final Pattern ISO_DURATION = Pattern.compile("\\bP(?:\\d+D)?(?:T[0-9.HMS-]+)?\\b");

    private final Map<String, List<String>> values;

    private Arguments(Map<String, List<String>> values) { this.values = values; }

    static Arguments parse(List<String> args, List<Option> options) throws UsageException {
        return parse(args, options, name -> Optional.empty());
    }

    /** {@link #parse}, an undeclared option that {@code whyNot} has a reason for refused with that reason. */
    static Arguments parse(List<String> args, List<Option> options, java.util.function.Function<String, Optional<String>> whyNot)
            throws UsageException {
        Map<String, Option> byName = new LinkedHashMap<>();
        options.forEach(o -> byName.put(o.name(), o));
        Map<String, List<String>> values = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new UsageException("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            String inlineValue = null;
            int equals = name.indexOf('=');
            if (equals >= 0) {
                inlineValue = name.substring(equals + 1);
                name = name.substring(0, equals);
            }
            Option option = byName.get(name);
            if (option == null) {
                Optional<String> why = whyNot.apply(name);
                if (why.isPresent()) {
                    throw new UsageException(why.get());
                }
                throw new UsageException("unknown option --" + name
                        + ClosestName.to(name, byName.keySet()).map(closest -> "; did you mean --" + closest + "?").orElse(""));
            }
            String value;
            if (option.isFlag()) {
                if (inlineValue != null) {
                    throw new UsageException("--" + name + " takes no value");
                }
                value = "true";
            } else if (inlineValue != null) {
                value = inlineValue;
            } else if (i + 1 < args.size() && !args.get(i + 1).startsWith("--")) {
                value = args.get(++i);
            } else {
                throw new UsageException("--" + name + " needs a value (" + option.valueName() + ")");
            }
            List<String> list = values.computeIfAbsent(name, n -> new ArrayList<>());
            if (!list.isEmpty() && !option.repeatable()) {
                throw new UsageException("--" + name + " is given more than once");
            }
            list.add(value);
        }
        return new Arguments(values);
    }

    /**
     * The queue named by {@code --queue} (or the command's first word), checked as a queue name:
     * a bad one is bad usage (exit 2), not a failed operation.
     */
    Optional<String> queueName() throws UsageException {
        Optional<String> queue = value("queue");
        if (queue.isPresent()) {
            requireQueueName("", queue.get());
        }
        return queue;
    }

    private static void requireQueueName(String option, String queue) throws UsageException {
        if (!QUEUE_NAME.matcher(queue).matches()) {
            throw new UsageException(option + "'" + queue + "' is not a queue name (1-200 of letters, digits, '_', '.', ':', '-')");
        }
    }

    boolean has(String name) { return values.containsKey(name); }

    Optional<String> value(String name) { return Optional.ofNullable(values.get(name)).map(List::getFirst); }

    List<String> values(String name) { return values.getOrDefault(name, List.of()); }

    /**
     * A comma-separated option as a list, such as {@code --queues a,b}; empty when the option is absent. Given but naming nothing
     * ({@code --queues ''}) is bad usage, not "every queue"; {@code --queues} names must be queue names.
     */
    List<String> list(String name) throws UsageException {
        Optional<String> value = value(name);
        if (value.isEmpty()) {
            return List.of();
        }
        List<String> items = Arrays.stream(value.get().split(",", -1)).map(String::strip).toList();
        if (items.stream().allMatch(String::isEmpty)) {
            throw new UsageException("--" + name + " is empty: name at least one, or leave the option out");
        }
        if (items.contains("")) {
            // "a,,b": a name left out by mistake, not a list of two
            throw new UsageException("--" + name + " has an empty name in '" + value.get() + "': list names separated by commas");
        }
        if (name.equals("queues")) {
            for (String queue : items) {
                requireQueueName("--queues: ", queue);
            }
        }
        return items;
    }

    /** The whole number of {@code name}, at least {@code min}; empty when the option is absent. */
    Optional<Integer> intValue(String name, int min) throws UsageException {
        return has(name) ? Optional.of(intValue(name, min, min)) : Optional.empty();
    }

    int intValue(String name, int defaultValue, int min) throws UsageException {
        Optional<String> value = value(name);
        if (value.isEmpty()) {
            return defaultValue;
        }
        int n;
        try {
            n = Integer.parseInt(value.get());
        } catch (NumberFormatException e) {
            if (value.get().matches("\\+?\\d+")) {
                throw new UsageException("--" + name + " is too large: at most " + Integer.MAX_VALUE + ", was " + value.get());
            }
            throw new UsageException("--" + name + " must be a whole number, was '" + value.get() + "'");
        }
        if (n < min) {
            throw new UsageException("--" + name + " must be at least " + min + ", was " + n);
        }
        return n;
    }

    /** A duration such as {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h} or ISO-8601 {@code PT5S}. */
    Optional<Duration> duration(String name) throws UsageException {
        Optional<String> value = value(name);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(parseDuration("--" + name, value.get()));
    }

    static Duration parseDuration(String what, String text) throws UsageException {
        try {
            return Settings.parseDuration(what, text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /**
     * Gives the value of option {@code name} to the library: a value it refuses is a usage error that names the
     * option ({@link #inFlagTerms}), since the library's message names its Java API, which a shell user never typed.
     */
    static <T> T applied(String name, Supplier<T> apply) throws UsageException {
        try {
            return apply.get();
        } catch (IllegalArgumentException e) {
            throw new UsageException(inFlagTerms("--" + name, String.valueOf(e.getMessage())));
        }
    }

    /**
     * A library's refusal of {@code flag}'s value, as the command line says it. A message whose subject is the
     * option's own setting ("rate limit burst must...", "Uniqueness.whileQueued(ttl) must..." for {@code --unique-ttl})
     * gets the flag as its subject; any other is put after the flag ("--rate: rate limit permits must..."). Java
     * durations read as the CLI's ({@code Duration.ofHours(1)} and {@code PT1H} as {@code 1h}).
     */
    static String inFlagTerms(String flag, String message) {
        String text = message;
        Matcher subject = SUBJECT.matcher(text);
        if (subject.find() && lastWord(subject.group(1)).equalsIgnoreCase(flag.substring(flag.lastIndexOf('-') + 1))) {
            text = flag + text.substring(subject.end(1));
        } else {
            text = flag + ": " + text;
        }
        text = JAVA_DURATION.matcher(text).replaceAll(m -> m.group(2) + switch (m.group(1)) {
            case "Millis" -> "ms";
            case "Seconds" -> "s";
            case "Minutes" -> "m";
            case "Hours" -> "h";
            default -> "d";
        });
        text = ISO_DURATION.matcher(text).replaceAll(m -> Matcher.quoteReplacement(cliDuration(m.group())));
        return text.replace("leave the setting out", "leave the option out");
    }

    private static String lastWord(String text) {
        Matcher m = WORD.matcher(text);
        String last = "";
        while (m.find()) {
            last = m.group();
        }
        return last;
    }

    /** An ISO-8601 duration as the CLI takes one ({@code 0s}, {@code 1h}, {@code -5m}, {@code 1500ms}); unchanged if not one. */
    static String cliDuration(String iso) {
        Duration d;
        try {
            d = Duration.parse(iso);
        } catch (java.time.format.DateTimeParseException e) {
            return iso;
        }
        String sign = d.isNegative() ? "-" : "";
        Duration a = d.abs();
        if (a.isZero()) {
            return "0s";
        }
        if (a.getNano() % 1_000_000 != 0) {
            return iso;
        }
        long ms = a.toMillis();
        for (var unit : List.of(Map.entry(86_400_000L, "d"), Map.entry(3_600_000L, "h"), Map.entry(60_000L, "m"), Map.entry(1000L, "s"))) {
            if (ms % unit.getKey() == 0) {
                return sign + ms / unit.getKey() + unit.getValue();
            }
        }
        return sign + ms + "ms";
    }
}
