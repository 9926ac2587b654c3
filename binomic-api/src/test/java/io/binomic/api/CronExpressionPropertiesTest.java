package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.Month;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Properties of {@link CronExpression#next}, checked against field value sets that the
 * generators compute themselves (never with the parser under test). QuickTheories generates the
 * cases and shrinks a failing one; a failure prints the seed to replay it with
 * {@code -DQT_SEED=...}.
 */
class CronExpressionPropertiesTest {
    private static final List<String> MONTH_NAMES =
            List.of("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC");
    private static final List<String> DAY_NAMES = List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT");
    private static final int BRUTE_FORCE_WINDOW_MINUTES = 3 * 24 * 60;

    /** jqwik ran each property 200 times; QuickTheories skips a repeated draw, so ask for some more. */
    private static final int MIN_CASES = 200;
    private static final int EXAMPLES = 240;

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

    @Test
    void successiveFireTimesStrictlyIncreaseAndMatchEveryField() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(EXAMPLES).forAll(cronCases(), startTimes()).checkAssert((cronCase, start) -> {
            cases.incrementAndGet();
            if (!cronCase.canEverMatch()) {
                assertThrows(IllegalArgumentException.class, () -> CronExpression.parse(cronCase.text()));
                return;
            }
            CronExpression cron = CronExpression.parse(cronCase.text());
            ZonedDateTime previous = start;
            for (int i = 0; i < 5; i++) {
                ZonedDateTime next = cron.next(previous);
                ZonedDateTime before = previous;
                assertTrue(next.isAfter(before), () -> cronCase.text() + ": " + next + " is not after " + before);
                assertTrue(cronCase.matches(next), () -> cronCase.text() + ": " + next + " does not match");
                assertEquals(ZoneOffset.UTC, next.getZone());
                previous = next;
            }
        });
        assertAtLeast(MIN_CASES, cases);
    }

    @Test
    void noMatchingMinuteIsSkippedBeforeTheNextFireTime() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(EXAMPLES).forAll(cronCases(), startTimes()).checkAssert((cronCase, start) -> {
            cases.incrementAndGet();
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
        });
        assertAtLeast(MIN_CASES, cases);
    }

    private static void assertAtLeast(int expected, AtomicInteger cases) {
        assertTrue(cases.get() >= expected, () -> "only " + cases.get() + " distinct cases ran, expected " + expected);
    }

    static Gen<ZonedDateTime> startTimes() {
        long from = Instant.parse("2000-01-01T00:00:00Z").getEpochSecond();
        long to = Instant.parse("2100-01-01T00:00:00Z").getEpochSecond();
        return longs().between(from, to)
                .map(seconds -> LocalDateTime.ofEpochSecond(seconds, 0, ZoneOffset.UTC).atZone(ZoneOffset.UTC));
    }

    static Gen<CronCase> cronCases() {
        return field(0, 59, List.of()).zip(
                field(0, 23, List.of()),
                field(1, 31, List.of()),
                field(1, 12, MONTH_NAMES),
                field(0, 7, DAY_NAMES),
                CronCase::new);
    }

    /** A list of one to three elements; names, when given, start at {@code min}. */
    private static Gen<FieldSpec> field(int min, int max, List<String> names) {
        return lists().of(element(min, max, names)).ofSizeBetween(1, 3).map(elements -> new FieldSpec(
                elements.stream().map(FieldSpec::text).collect(Collectors.joining(",")),
                elements.stream().flatMap(e -> e.values().stream()).collect(Collectors.toCollection(TreeSet::new))));
    }

    private static Gen<FieldSpec> element(int min, int max, List<String> names) {
        Gen<Integer> value = integers().between(min, max);
        Gen<Integer> step = integers().between(1, max - min + 2);
        Gen<Boolean> byName = booleans().all();
        Gen<FieldSpec> star = Generate.constant(new FieldSpec("*", every(min, max, 1)));
        Gen<FieldSpec> single = value.zip(byName, (v, named) -> new FieldSpec(render(v, min, names, named), Set.of(v)));
        Gen<FieldSpec> range = value.zip(value, byName, (a, b, named) -> new FieldSpec(
                render(Math.min(a, b), min, names, named) + "-" + render(Math.max(a, b), min, names, named),
                every(Math.min(a, b), Math.max(a, b), 1)));
        Gen<FieldSpec> starStep = step.map(n -> new FieldSpec("*/" + n, every(min, max, n)));
        Gen<FieldSpec> rangeStep = value.zip(value, step, (a, b, n) -> new FieldSpec(
                Math.min(a, b) + "-" + Math.max(a, b) + "/" + n, every(Math.min(a, b), Math.max(a, b), n)));
        Gen<FieldSpec> startStep = value.zip(step, (a, n) -> new FieldSpec(a + "/" + n, every(a, max, n)));
        return Generate.oneOf(star, single, range, starStep, rangeStep, startStep);
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
