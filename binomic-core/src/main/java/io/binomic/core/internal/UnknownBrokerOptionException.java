package io.binomic.core.internal;

import io.binomic.core.internal.cli.ClosestName;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The broker options the chosen broker does not read: a mistyped {@code eviction.alowed} would otherwise
 * leave the setting it meant at its default without a word. It names every one refused, so that a
 * second typo is not learnt only after the first is fixed, and keeps their names so that each place
 * that reports them names the options as its user typed them: {@code BrokerConfig} in Java, the
 * {@code broker.option.} key of the CLI's settings, the property of Spring Boot.
 */
public final class UnknownBrokerOptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String[] options;
    private final String brokerId;
    private final String[] known;

    UnknownBrokerOptionException(List<String> options, String brokerId, Set<String> known) {
        super(describe("BrokerConfig option ", options, brokerId, List.copyOf(known), k -> k));
        this.options = options.toArray(String[]::new);
        this.brokerId = brokerId;
        this.known = known.toArray(String[]::new);
    }

    /** The first option refused, as given to {@code BrokerConfig.options}, without a prefix. */
    public String option() { return options[0]; }

    /** Every option refused, without a prefix. */
    public List<String> options() { return List.of(options); }

    /** The refusal with every option named as {@code prefix} + its name, such as {@code broker.option.eviction.allowed}. */
    public String describe(String prefix) {
        return describe(prefix, options(), brokerId, List.of(known), k -> prefix + k);
    }

    /**
     * The refusal with each option the broker reads named by {@code known}: an option with a property of its own
     * (Spring Boot's {@code binomic.broker.redisson-config}) is offered as that property, not as one it replaces.
     */
    public String describe(String prefix, Function<String, String> knownName) {
        return describe(prefix, options(), brokerId, List.of(known), knownName);
    }

    private static String describe(String prefix, List<String> options, String brokerId, List<String> known,
            Function<String, String> knownName) {
        boolean bare = prefix.endsWith(" ");
        List<String> candidates = known.stream().map(k -> bare ? k : prefix + k).toList();
        String named = String.join(", ", known.stream().map(knownName).sorted().toList());
        if (options.size() == 1) {
            String typed = bare ? options.getFirst() : prefix + options.getFirst();
            return (bare ? prefix : "") + typed + " is not an option of the " + brokerId + " broker"
                    + meant(typed, candidates, known, knownName).map(m -> "; did you mean '" + m + "'? Its").orElse("; its")
                    + " options are " + named;
        }
        List<String> refused = new ArrayList<>();
        for (String option : options) {
            String typed = bare ? option : prefix + option;
            refused.add(typed + meant(typed, candidates, known, knownName).map(m -> " (did you mean '" + m + "'?)").orElse(""));
        }
        return (bare ? prefix.strip() + "s " : "") + String.join(", ", refused.subList(0, refused.size() - 1)) + " and "
                + refused.getLast() + " are not options of the " + brokerId + " broker; its options are " + named;
    }

    private static java.util.Optional<String> meant(String typed, List<String> candidates, List<String> known,
            Function<String, String> knownName) {
        return ClosestName.to(typed, candidates).map(c -> knownName.apply(known.get(candidates.indexOf(c))));
    }
}
