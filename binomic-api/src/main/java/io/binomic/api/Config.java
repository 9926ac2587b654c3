package io.binomic.api;

import java.time.Duration;

/** Shared checks of the configuration types. */
final class Config {
    private Config() { }

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
