package io.binomic.api;

import java.time.ZonedDateTime;

/**
 * A standard 5-field cron expression: minute, hour, day of month, month, day of week.
 * Fields accept {@code *}, numbers, ranges {@code a-b}, steps {@code * /n} and {@code a-b/n},
 * lists {@code a,b,c}, and names ({@code JAN-DEC}, {@code SUN-SAT}; 0 and 7 are Sunday).
 * When both day fields are restricted, a day matches if either matches (classic cron).
 */
public final class CronExpression {
    private final String expression;

    private CronExpression(String expression) {
        this.expression = expression;
    }

    /** Parses {@code expression}; a bad one is an {@link IllegalArgumentException} naming the field. */
    public static CronExpression parse(String expression) {
        if (expression == null) {
            throw new IllegalArgumentException("cron expression must not be null");
        }
        return new CronExpression(expression.trim());
    }

    /** The first time strictly after {@code after} that matches, in {@code after}'s zone. */
    public ZonedDateTime next(ZonedDateTime after) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The expression as parsed. */
    public String expression() {
        return expression;
    }

    @Override
    public String toString() {
        return expression;
    }
}
