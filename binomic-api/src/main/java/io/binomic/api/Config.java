package io.binomic.api;

import java.time.Duration;

/** Shared checks for the configuration records. */
final class Config {
    private Config() { }

    static Duration requirePositive(String field, Duration value) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, was " + value);
        }
        return value;
    }

    static Duration requireNotNegative(String field, Duration value) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.isNegative()) {
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
