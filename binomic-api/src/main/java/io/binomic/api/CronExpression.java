package io.binomic.api;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.Month;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneRules;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A standard 5-field cron expression: minute, hour, day of month, month, day of week; or a
 * 6-field one with a leading second field (0-59), for schedules finer than a minute.
 * Fields accept {@code *}, numbers, ranges {@code a-b}, steps <code>&#42;/n</code>, {@code a-b/n} and
 * {@code a/n} (from {@code a} to the end of the field), lists {@code a,b,c}, and names
 * ({@code JAN-DEC}, {@code SUN-SAT}, case-insensitive; 0 and 7 are Sunday). The shortcuts
 * {@code @hourly}, {@code @daily} ({@code @midnight}), {@code @weekly}, {@code @monthly} and
 * {@code @yearly} ({@code @annually}) are accepted too.
 *
 * <p>Day rule (as in Vixie cron): when both day fields are restricted, a day matches if
 * <em>either</em> matches; a day field counts as unrestricted when it starts with {@code *}
 * (so <code>&#42;/2</code> in day-of-month combined with {@code MON} means odd days that are Mondays).
 *
 * <p>Time zones: {@link #next} walks local date-times and maps each match to the zone. A local
 * time skipped by a spring-forward gap fires once, at the first instant after the gap; a local
 * time repeated by a fall-back overlap fires once, at its earlier offset.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class CronExpression {
    private static final String FIELD_LIST = "minute hour day-of-month month day-of-week";
    private static final long SECOND_ZERO = 1L;

    private static final Map<String, String> SHORTCUTS = Map.of(
            "@yearly", "0 0 1 1 *",
            "@annually", "0 0 1 1 *",
            "@monthly", "0 0 1 * *",
            "@weekly", "0 0 * * 0",
            "@daily", "0 0 * * *",
            "@midnight", "0 0 * * *",
            "@hourly", "0 * * * *");

    private static final List<String> MONTH_NAMES =
            List.of("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC");
    private static final List<String> DAY_NAMES = List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT");

    /** One field: its name in messages, its range, and the names it accepts, in value order from {@code min}. */
    private record Field(String label, int min, int max, List<String> names, String nameHint) {
        static final Field SECOND = new Field("second", 0, 59, List.of(), "");
        static final Field MINUTE = new Field("minute", 0, 59, List.of(), "");
        static final Field HOUR = new Field("hour", 0, 23, List.of(), "");
        static final Field DAY_OF_MONTH = new Field("day-of-month", 1, 31, List.of(), "");
        static final Field MONTH = new Field("month", 1, 12, MONTH_NAMES, " or a month name (JAN-DEC)");
        // 7 is accepted as a second Sunday and folded onto 0 after parsing.
        static final Field DAY_OF_WEEK = new Field("day-of-week", 0, 7, DAY_NAMES, " or a day name (SUN-SAT)");
    }

    private final String expression;
    // Bit i set = value i allowed. Every field fits in a long (largest value is 59).
    private final long seconds;
    private final long minutes;
    private final long hours;
    private final long daysOfMonth;
    private final long months;
    private final long daysOfWeek;
    private final boolean dayOfMonthStar;
    private final boolean dayOfWeekStar;

    private CronExpression(String expression, String[] all) {
        this.expression = expression;
        // The 6-field form has a leading second field; the 5-field form fires at second 0.
        this.seconds = all.length == 6 ? parseField(Field.SECOND, all[0]) : SECOND_ZERO;
        String[] fields = all.length == 6 ? Arrays.copyOfRange(all, 1, 6) : all;
        this.minutes = parseField(Field.MINUTE, fields[0]);
        this.hours = parseField(Field.HOUR, fields[1]);
        this.daysOfMonth = parseField(Field.DAY_OF_MONTH, fields[2]);
        this.months = parseField(Field.MONTH, fields[3]);
        long dow = parseField(Field.DAY_OF_WEEK, fields[4]);
        this.daysOfWeek = (dow & ~(1L << 7)) | ((dow >>> 7) & 1L);
        this.dayOfMonthStar = fields[2].startsWith("*");
        this.dayOfWeekStar = fields[4].startsWith("*");
        rejectDayThatNeverOccurs();
    }

    /**
     * Parses {@code expression}.
     *
     * @throws IllegalArgumentException naming the field, the bad value and the fix, when the
     *     expression is malformed or can never match (such as {@code 0 0 30 2 *})
     */
    public static CronExpression parse(String expression) {
        if (expression == null) {
            throw new IllegalArgumentException("cron expression must not be null");
        }
        String trimmed = expression.trim();
        String text = trimmed.startsWith("@") ? expandShortcut(trimmed) : trimmed;
        String[] fields = text.isEmpty() ? new String[0] : text.split("\\s+");
        if (fields.length != 5 && fields.length != 6) {
            throw new IllegalArgumentException("cron expression needs 5 fields (" + FIELD_LIST
                    + ") or 6 with a leading second, got " + fields.length + " in '" + trimmed + "'");
        }
        return new CronExpression(trimmed, fields);
    }

    private static String expandShortcut(String shortcut) {
        String expanded = SHORTCUTS.get(shortcut.toLowerCase(Locale.ROOT));
        if (expanded == null) {
            throw new IllegalArgumentException("cron shortcut '" + shortcut
                    + "' is unknown; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly");
        }
        return expanded;
    }

    private long parseField(Field field, String text) {
        long bits = 0;
        for (String element : text.split(",", -1)) {
            if (element.isEmpty()) {
                throw fieldError(field, "'" + text + "' has an empty list element; remove the extra comma");
            }
            bits |= parseElement(field, element);
        }
        return bits;
    }

    private long parseElement(Field field, String element) {
        int slash = element.indexOf('/');
        String range = slash < 0 ? element : element.substring(0, slash);
        int step = slash < 0 ? 1 : parseStep(field, element.substring(slash + 1));
        int from;
        int to;
        if (range.equals("*")) {
            from = field.min;
            to = field.max;
        } else {
            int dash = range.indexOf('-');
            if (dash < 0) {
                from = parseValue(field, range);
                // "a/n" runs from a to the end of the field; a bare "a" is just a.
                to = slash < 0 ? from : field.max;
            } else {
                from = parseValue(field, range.substring(0, dash));
                to = parseValue(field, range.substring(dash + 1));
                if (from > to) {
                    throw fieldError(field, "range " + range
                            + " goes backwards; write the smaller value first or use a list");
                }
            }
        }
        long bits = 0;
        for (int value = from; value <= to; value += step) {
            bits |= 1L << value;
        }
        return bits;
    }

    private int parseStep(Field field, String text) {
        int step;
        try {
            step = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            step = 0;
        }
        if (step < 1) {
            throw fieldError(field, "step '" + text + "' must be a whole number of at least 1");
        }
        return step;
    }

    private int parseValue(Field field, String text) {
        int nameIndex = field.names.indexOf(text.toUpperCase(Locale.ROOT));
        if (nameIndex >= 0) {
            return field.min + nameIndex;
        }
        if (text.isEmpty() || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw fieldError(field, "value '" + text + "' is not a number" + field.nameHint);
        }
        // Long digit strings must still produce the range message, not an overflow.
        long value = text.length() > 9 ? Long.MAX_VALUE : Long.parseLong(text);
        if (value < field.min || value > field.max) {
            throw fieldError(field, "value " + (text.length() > 9 ? text : Long.toString(value))
                    + " is out of range " + field.min + "-" + field.max);
        }
        return (int) value;
    }

    private IllegalArgumentException fieldError(Field field, String problem) {
        return new IllegalArgumentException("cron field '" + field.label + "' " + problem + " in '" + expression + "'");
    }

    /**
     * Fails now on a day-of-month that no selected month has (such as 30 February), so that
     * {@link #next} never searches forever. When day-of-week is restricted too the days are
     * OR-ed and some weekday always comes; when day-of-month starts with {@code *} it holds
     * day 1, which every month has.
     */
    private void rejectDayThatNeverOccurs() {
        if (dayOfMonthStar || !dayOfWeekStar) {
            return;
        }
        for (Month month : Month.values()) {
            boolean monthSelected = (months & (1L << month.getValue())) != 0;
            long daysInMonth = (1L << (month.maxLength() + 1)) - 2; // bits 1..maxLength
            if (monthSelected && (daysOfMonth & daysInMonth) != 0) {
                return;
            }
        }
        throw new IllegalArgumentException("cron expression '" + expression
                + "' never matches: no selected month has the selected day-of-month;"
                + " choose a day that exists in the month (February has at most 29 days)");
    }

    /**
     * The first time strictly after {@code after} that matches, in {@code after}'s zone (at
     * second 0 for a 5-field expression). Searches field by field (a yearly expression costs a few steps, not a minute
     * per step).
     */
    public ZonedDateTime next(ZonedDateTime after) {
        ZoneId zone = after.getZone();
        LocalDateTime candidate = after.toLocalDateTime().truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        while (true) {
            LocalDateTime match = nextLocalMatch(candidate);
            ZonedDateTime zoned = atZone(match, zone);
            // In a fall-back overlap, a local time that maps to its earlier offset may still be
            // at or before 'after' (which sits at the later offset): it already fired, move on.
            if (zoned.isAfter(after)) {
                return zoned;
            }
            candidate = match.plusSeconds(1);
        }
    }

    private static ZonedDateTime atZone(LocalDateTime local, ZoneId zone) {
        ZoneRules rules = zone.getRules();
        if (rules.getValidOffsets(local).isEmpty()) {
            // Inside a spring-forward gap: fire at the first instant after the gap.
            return rules.getTransition(local).getInstant().atZone(zone);
        }
        return ZonedDateTime.ofLocal(local, zone, null);
    }

    /** The first local date-time at or after {@code from} (whole seconds) that matches. */
    private LocalDateTime nextLocalMatch(LocalDateTime from) {
        LocalDateTime t = from;
        while (true) {
            int month = t.getMonthValue();
            if (!has(months, month)) {
                int nextMonth = nextSetBit(months, month + 1);
                t = nextMonth < 0
                        ? LocalDate.of(t.getYear() + 1, 1, 1).atStartOfDay()
                        : LocalDate.of(t.getYear(), nextMonth, 1).atStartOfDay();
                continue;
            }
            if (!dayMatches(t.toLocalDate())) {
                t = t.toLocalDate().plusDays(1).atStartOfDay();
                continue;
            }
            int hour = nextSetBit(hours, t.getHour());
            if (hour < 0) {
                t = t.toLocalDate().plusDays(1).atStartOfDay();
                continue;
            }
            if (hour != t.getHour()) {
                t = t.toLocalDate().atTime(hour, 0);
            }
            int minute = nextSetBit(minutes, t.getMinute());
            if (minute < 0) {
                t = t.truncatedTo(ChronoUnit.HOURS).plusHours(1);
                continue;
            }
            if (minute != t.getMinute()) {
                t = t.withMinute(minute).withSecond(0);
            }
            int second = nextSetBit(seconds, t.getSecond());
            if (second < 0) {
                t = t.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
                continue;
            }
            return t.withSecond(second);
        }
    }

    private boolean dayMatches(LocalDate date) {
        boolean dayOfMonthMatches = has(daysOfMonth, date.getDayOfMonth());
        boolean dayOfWeekMatches = has(daysOfWeek, date.getDayOfWeek().getValue() % 7);
        if (dayOfMonthStar || dayOfWeekStar) {
            return dayOfMonthMatches && dayOfWeekMatches;
        }
        return dayOfMonthMatches || dayOfWeekMatches;
    }

    private static boolean has(long bits, int value) { return (bits & (1L << value)) != 0; }

    /** The smallest set bit at or above {@code from}, or -1. */
    private static int nextSetBit(long bits, int from) {
        if (from > 63) {
            return -1;
        }
        long remaining = bits & (-1L << from);
        return remaining == 0 ? -1 : Long.numberOfTrailingZeros(remaining);
    }

    /** The expression as parsed (trimmed). */
    public String expression() { return expression; }

    /** Two expressions are equal when their (trimmed) text is equal. */
    @Override
    public boolean equals(Object other) {
        return other instanceof CronExpression that && expression.equals(that.expression);
    }

    @Override
    public int hashCode() { return expression.hashCode(); }

    @Override
    public String toString() { return expression; }
}
