package io.binomic.api.internal;

import java.time.Duration;
import java.util.function.Function;

/**
 * One setting of a configuration builder: it holds its default until a setter gives it a value,
 * and a setter may give it one once. A second call is a mistake worth naming, so it is an
 * {@link IllegalArgumentException} naming the field and both values; a value copied by a
 * {@code toBuilder()} is not a call, and may be replaced once. Exported to the core only, for its
 * own builders: applications see the builders, never this.
 *
 * @param <T> the type of the value
 */
public final class Once<T> {
    private final String field;
    private final Function<? super T, String> shown;
    private T value;
    private boolean set;

    /** A setting named {@code field} (as its messages say it) holding {@code defaultValue} until set. */
    public Once(String field, T defaultValue) { this(field, defaultValue, String::valueOf); }

    /** As {@link #Once(String, Object)}, shown in messages by {@code shown} (to keep a secret out of them). */
    public Once(String field, T defaultValue, Function<? super T, String> shown) {
        this.field = field;
        this.value = defaultValue;
        this.shown = shown;
    }

    /**
     * Gives {@code setting} its {@code value} and returns {@code builder}, for a setter's one line.
     *
     * @throws IllegalArgumentException when a setter already gave it one
     */
    public static <B, T> B set(B builder, Once<T> setting, T value) {
        if (setting.set) {
            throw new IllegalArgumentException(setting.field + " is set twice (" + setting.show(setting.value) + ", then "
                    + setting.show(value) + "); set it once");
        }
        setting.value = value;
        setting.set = true;
        return builder;
    }

    /** Replaces the default by a built object's value, which a setter may still replace once. */
    public void copy(T copied) { value = copied; }

    /** The value given, else the default or the copied value. */
    public T get() { return value; }

    /**
     * The value a setter gave {@code setting}; else its default (or copied value), but at most
     * {@code cap}: a default that follows another setting, such as a period under a short lease.
     */
    public static Duration atMostUnlessGiven(Once<Duration> setting, Duration cap) {
        return setting.set || setting.value == null || setting.value.compareTo(cap) <= 0 ? setting.value : cap;
    }

    private String show(T v) { return v == null ? "null" : shown.apply(v); }
}
