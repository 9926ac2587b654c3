package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.Month;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of {@link CronExpression#next}, checked against field value sets that the
 * generators compute themselves (never with the parser under test).
 */
class CronExpressionPropertiesTest {
    private static final List<String> MONTH_NAMES =
            List.of("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC");
    private static final List<String> DAY_NAMES = List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT");
    private static final int BRUTE_FORCE_WINDOW_MINUTES = 3 * 24 * 60;

    /** One field as text plus the values it selects. */
    record FieldSpec(String text, Set<Integer> values) {
        boolean startsWithStar() {
            return text.startsWith("*");
        }
    }

    /** A generated expression and the value sets each field selects. */
    record CronCase(FieldSpec minute, FieldSpec hour, FieldSpec dayOfMonth, FieldSpec month, FieldSpec dayOfWeek) {
        String text() {
            return String.join(" ", minute.text, hour.text, dayOfMonth.text, month.text, dayOfWeek.text);
        }

        boolean matches(ZonedDateTime t) {
            int weekday = t.getDayOfWeek().getValue() % 7;
            boolean dayOfMonthOk = dayOfMonth.values.contains(t.getDayOfMonth());
            boolean dayOfWeekOk = dayOfWeek.values.contains(weekday) || (weekday == 0 && dayOfWeek.values.contains(7));
            boolean dayOk = dayOfMonth.startsWithStar() || dayOfWeek.startsWithStar()
                    ? dayOfMonthOk && dayOfWeekOk
                    : dayOfMonthOk || dayOfWeekOk;
            return t.getSecond() == 0 && t.getNano() == 0
                    && minute.values.contains(t.getMinute())
                    && hour.values.contains(t.getHour())
                    && month.values.contains(t.getMonthValue())
                    && dayOk;
        }

        /** Whether some date can match at all (a day-of-month alone may not exist in the months). */
        boolean canEverMatch() {
            if (dayOfMonth.startsWithStar() || !dayOfWeek.startsWithStar()) {
                return true;
            }
            return month.values.stream().anyMatch(m ->
                    dayOfMonth.values.stream().anyMatch(d -> d <= Month.of(m).maxLength()));
        }
    }

    @Property(tries = 200)
    void successiveFireTimesStrictlyIncreaseAndMatchEveryField(
            @ForAll("cronCases") CronCase cronCase, @ForAll("startTimes") ZonedDateTime start) {
        if (!cronCase.canEverMatch()) {
            assertThrows(IllegalArgumentException.class, () -> CronExpression.parse(cronCase.text()));
            return;
        }
        CronExpression cron = CronExpression.parse(cronCase.text());
        ZonedDateTime previous = start;
        for (int i = 0; i < 5; i++) {
            ZonedDateTime next = cron.next(previous);
            assertTrue(next.isAfter(previous), () -> cronCase.text() + ": " + next + " is not after " + start);
            assertTrue(cronCase.matches(next), () -> cronCase.text() + ": " + next + " does not match");
            assertEquals(ZoneOffset.UTC, next.getZone());
            previous = next;
        }
    }

    @Property(tries = 200)
    void noMatchingMinuteIsSkippedBeforeTheNextFireTime(
            @ForAll("cronCases") CronCase cronCase, @ForAll("startTimes") ZonedDateTime start) {
        if (!cronCase.canEverMatch()) {
            return;
        }
        ZonedDateTime next = CronExpression.parse(cronCase.text()).next(start);
        ZonedDateTime windowEnd = start.plusMinutes(BRUTE_FORCE_WINDOW_MINUTES);
        for (ZonedDateTime t = start.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
                t.isBefore(next) && t.isBefore(windowEnd); t = t.plusMinutes(1)) {
            ZonedDateTime skipped = t;
            assertFalse(cronCase.matches(skipped),
                    () -> cronCase.text() + ": " + skipped + " matches but next(" + start + ") = " + next);
        }
    }

    @Provide
    Arbitrary<ZonedDateTime> startTimes() {
        long from = Instant.parse("2000-01-01T00:00:00Z").getEpochSecond();
        long to = Instant.parse("2100-01-01T00:00:00Z").getEpochSecond();
        return Arbitraries.longs().between(from, to)
                .map(seconds -> LocalDateTime.ofEpochSecond(seconds, 0, ZoneOffset.UTC).atZone(ZoneOffset.UTC));
    }

    @Provide
    Arbitrary<CronCase> cronCases() {
        return Combinators.combine(
                        field(0, 59, List.of()),
                        field(0, 23, List.of()),
                        field(1, 31, List.of()),
                        field(1, 12, MONTH_NAMES),
                        field(0, 7, DAY_NAMES))
                .as(CronCase::new);
    }

    /** A list of one to three elements; names, when given, start at {@code min}. */
    private static Arbitrary<FieldSpec> field(int min, int max, List<String> names) {
        return element(min, max, names).list().ofMinSize(1).ofMaxSize(3).map(elements -> new FieldSpec(
                elements.stream().map(FieldSpec::text).collect(Collectors.joining(",")),
                elements.stream().flatMap(e -> e.values().stream()).collect(Collectors.toCollection(TreeSet::new))));
    }

    private static Arbitrary<FieldSpec> element(int min, int max, List<String> names) {
        Arbitrary<Integer> value = Arbitraries.integers().between(min, max);
        Arbitrary<Integer> step = Arbitraries.integers().between(1, max - min + 2);
        Arbitrary<FieldSpec> star = Arbitraries.just(new FieldSpec("*", every(min, max, 1)));
        Arbitrary<FieldSpec> single = Combinators.combine(value, Arbitraries.of(true, false))
                .as((v, byName) -> new FieldSpec(render(v, min, names, byName), Set.of(v)));
        Arbitrary<FieldSpec> range = Combinators.combine(value, value, Arbitraries.of(true, false))
                .as((a, b, byName) -> new FieldSpec(
                        render(Math.min(a, b), min, names, byName) + "-" + render(Math.max(a, b), min, names, byName),
                        every(Math.min(a, b), Math.max(a, b), 1)));
        Arbitrary<FieldSpec> starStep = step.map(n -> new FieldSpec("*/" + n, every(min, max, n)));
        Arbitrary<FieldSpec> rangeStep = Combinators.combine(value, value, step)
                .as((a, b, n) -> new FieldSpec(Math.min(a, b) + "-" + Math.max(a, b) + "/" + n,
                        every(Math.min(a, b), Math.max(a, b), n)));
        Arbitrary<FieldSpec> startStep = Combinators.combine(value, step)
                .as((a, n) -> new FieldSpec(a + "/" + n, every(a, max, n)));
        return Arbitraries.oneOf(star, single, range, starStep, rangeStep, startStep);
    }

    private static String render(int value, int min, List<String> names, boolean byName) {
        int index = value - min;
        if (byName && index < names.size()) {
            String name = names.get(index);
            return index % 2 == 0 ? name : name.toLowerCase(java.util.Locale.ROOT);
        }
        return Integer.toString(value);
    }

    private static Set<Integer> every(int from, int to, int step) {
        Set<Integer> values = new TreeSet<>();
        for (int v = from; v <= to; v += step) {
            values.add(v);
        }
        return values;
    }
}
