package io.binomic.api.spi;

import io.binomic.api.Uniqueness;
import java.time.Duration;
import java.util.Optional;

/**
 * The unique key a message claims, as it travels in its {@value #HEADER} header: scope, time-to-live
 * and key. A broker takes the key when it stores the message ({@link UniqueSubmits#submitUnique}) and gives
 * it back as the scope says: when the job starts ({@link UniqueSubmits#releaseUniqueAtStart}), when it ends
 * (the settlement of an ack or a dead letter, a cancel), or when the time-to-live passes. A key is
 * given back only by the job that holds it (compare and delete), so a late release never frees
 * another job's key.
 *
 * @param scope when the key is given back
 * @param ttl the longest it is held
 * @param key the key, unique per queue and task
 */
public record UniqueClaim(Uniqueness.Scope scope, Duration ttl, String key) {

    /** Header of a unique message: {@code <W|R|P> <ttl ms> <key>}. Reserved: submit sets it. */
    public static final String HEADER = "unique";

    /** Header of a debounced message: its debounce key. Reserved: submit sets it. */
    public static final String DEBOUNCE_HEADER = "debounce";

    public String headerValue() {
        char s = switch (scope) {
            case WHILE_QUEUED -> 'W';
            case WHILE_QUEUED_OR_RUNNING -> 'R';
            case FOR_PERIOD -> 'P';
        };
        return s + " " + ttl.toMillis() + " " + key;
    }

    /** True when the key is given back when the job ends (and not only at start or when its period passes). */
    public boolean releasedAtEnd() { return scope != Uniqueness.Scope.FOR_PERIOD; }

    /** The claim of {@code message}, if it is unique. */
    public static Optional<UniqueClaim> of(Message message) { return message.unique(); }

    /** The claim a {@value #HEADER} header's value says; empty when it is malformed. */
    public static Optional<UniqueClaim> parse(String v) {
        if (v == null || v.length() < 5 || v.charAt(1) != ' ') {
            return Optional.empty();
        }
        int space = v.indexOf(' ', 2);
        if (space < 0) {
            return Optional.empty();
        }
        Uniqueness.Scope scope = switch (v.charAt(0)) {
            case 'W' -> Uniqueness.Scope.WHILE_QUEUED;
            case 'R' -> Uniqueness.Scope.WHILE_QUEUED_OR_RUNNING;
            case 'P' -> Uniqueness.Scope.FOR_PERIOD;
            default -> null;
        };
        try {
            return scope == null ? Optional.empty()
                    : Optional.of(new UniqueClaim(scope, Duration.ofMillis(Long.parseLong(v.substring(2, space))), v.substring(space + 1)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The debounce key of {@code message}, if it is debounced. */
    public static Optional<String> debounceKey(Message message) { return message.debounceKey(); }
}
