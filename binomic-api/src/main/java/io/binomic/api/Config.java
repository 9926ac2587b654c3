package io.binomic.api;

import java.time.Duration;
import java.util.function.Function;

/** Shared checks and builder settings of the configuration types. */
final class Config {
    private Config() { }

    /**
     * One setting of a configuration builder: it holds its default until a setter gives it a
     * value, and a setter may give it one once. A second call is a mistake worth naming, so it is an
     * {@link IllegalArgumentException} naming the field and both values; a value copied by a
     * {@code toBuilder()} is not a call, and may be replaced once.
     *
     * @param <T> the type of the value
     */
    static final class Once<T> {
        private final String field;
        private final Function<? super T, String> shown;
        private T value;
        private boolean set;

        /** A setting named {@code field} (as its messages say it) holding {@code defaultValue} until set. */
        Once(String field, T defaultValue) { this(field, defaultValue, String::valueOf); }

        /** As {@link #Once(String, Object)}, shown in messages by {@code shown} (to keep a secret out of them). */
        Once(String field, T defaultValue, Function<? super T, String> shown) {
            this.field = field;
            this.value = defaultValue;
            this.shown = shown;
        }

        /**
         * Gives the setting its value.
         *
         * @throws IllegalArgumentException when a setter already gave it one
         */
        void set(T newValue) {
            if (set) {
                throw new IllegalArgumentException(field + " is set twice (" + show(value) + ", then " + show(newValue)
                        + "); set it once");
            }
            value = newValue;
            set = true;
        }

        /** Replaces the default by a built object's value, which a setter may still replace once. */
        void copy(T copied) { value = copied; }

        /** The value given, else the default or the copied value. */
        T get() { return value; }

        private String show(T v) { return v == null ? "null" : shown.apply(v); }
    }

    /** Gives {@code setting} its {@code value} ({@link Once#set}) and returns {@code builder}, for a setter's one line. */
    static <B, T> B set(B builder, Once<T> setting, T value) {
        setting.set(value);
        return builder;
    }

    /** {@code value}, or an {@link IllegalArgumentException} saying {@code message} when it is null. */
    static <T> T nonNull(T value, String message) {
        if (value == null) {
            throw new IllegalArgumentException(message);
        }
        return value;
    }

    static Duration requirePositive(String field, Duration value) {
        if (!nonNull(value, field + " must not be null").isPositive()) {
            throw new IllegalArgumentException(field + " must be positive, was " + value);
        }
        return value;
    }

    static Duration requireNotNegative(String field, Duration value) {
        if (nonNull(value, field + " must not be null").isNegative()) {
            throw new IllegalArgumentException(field + " must not be negative, was " + value);
        }
        return value;
    }

    static int requireAtLeast(String field, int min, int value) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be >= " + min + ", was " + value);
        }
        return value;
    }
}
