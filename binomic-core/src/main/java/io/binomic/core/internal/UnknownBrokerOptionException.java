package io.binomic.core.internal;

import io.binomic.core.internal.cli.ClosestName;
import java.util.List;
import java.util.Set;

/**
 * A broker option the chosen broker does not read: a mistyped {@code eviction.alowed} would otherwise
 * leave the setting it meant at its default without a word. It keeps the option's name so that each
 * place that reports it names the option as its user typed it: {@code BrokerConfig} in Java, the
 * {@code broker.option.} key of the CLI's settings.
 */
public final class UnknownBrokerOptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String option;
    private final String brokerId;
    private final String[] known;

    UnknownBrokerOptionException(String option, String brokerId, Set<String> known) {
        super(describe("BrokerConfig option ", option, brokerId, List.copyOf(known)));
        this.option = option;
        this.brokerId = brokerId;
        this.known = known.toArray(String[]::new);
    }

    /** The option as given to {@code BrokerConfig.option}, without a prefix. */
    public String option() { return option; }

    /** The refusal with every option named as {@code prefix} + its name, such as {@code broker.option.eviction.allowed}. */
    public String describe(String prefix) {
        return describe(prefix, option, brokerId, List.of(known));
    }

    private static String describe(String prefix, String option, String brokerId, List<String> known) {
        List<String> named = known.stream().map(k -> prefix.endsWith(" ") ? k : prefix + k).toList();
        String typed = prefix.endsWith(" ") ? option : prefix + option;
        return prefix + option + " is not an option of the " + brokerId + " broker" + ClosestName.hint(typed, named)
                + "; its options are " + String.join(", ", named);
    }
}
