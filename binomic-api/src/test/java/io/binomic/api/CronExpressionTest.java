package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CronExpressionTest {
    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    private static ZonedDateTime utc(String localDateTime) {
        return LocalDateTime.parse(localDateTime).atZone(UTC);
    }

    /** The next {@code count} fire times after {@code start}, as local date-times with offsets. */
    private static List<String> fires(String expression, ZonedDateTime start, int count) {
        CronExpression cron = CronExpression.parse(expression);
        List<String> result = new ArrayList<>();
        ZonedDateTime t = start;
        for (int i = 0; i < count; i++) {
            t = cron.next(t);
            result.add(t.toOffsetDateTime().toString());
        }
        return result;
    }

    @Nested
    class Fields {
        @Test
        void everyMinuteFiresAtTheNextWholeMinuteStrictlyAfter() {
            assertEquals(List.of("2026-01-01T10:01Z", "2026-01-01T10:02Z"),
                    fires("* * * * *", utc("2026-01-01T10:00:00"), 2));
            assertEquals(List.of("2026-01-01T10:01Z"), fires("* * * * *", utc("2026-01-01T10:00:59.999"), 1));
        }

        @Test
        void fixedTimeFiresDaily() {
            assertEquals(List.of("2026-01-01T09:30Z", "2026-01-02T09:30Z"),
                    fires("30 9 * * *", utc("2026-01-01T09:29:00"), 2));
        }

        @Test
        void rangesStepsAndListsCombine() {
            assertEquals(List.of("2026-01-01T10:00Z", "2026-01-01T10:20Z", "2026-01-01T10:40Z",
                            "2026-01-01T10:45Z", "2026-01-01T11:00Z"),
                    fires("*/20,45 10-11 * * *", utc("2026-01-01T09:00:00"), 5));
        }

        @Test
        void rangeWithStepStartsAtTheRangeStart() {
            assertEquals(List.of("2026-01-01T00:05Z", "2026-01-01T00:20Z", "2026-01-01T00:35Z",
                            "2026-01-01T01:05Z"),
                    fires("5-35/15 * * * *", utc("2026-01-01T00:00:00"), 4));
        }

        @Test
        void singleValueWithStepRunsToTheEndOfTheField() {
            assertEquals(List.of("2026-01-01T20:00Z", "2026-01-01T22:00Z", "2026-01-02T20:00Z"),
                    fires("0 20/2 * * *", utc("2026-01-01T19:00:00"), 3));
        }

        @Test
        void monthAndDayNamesAreCaseInsensitive() {
            // 2026-03-02 is a Monday.
            assertEquals(List.of("2026-03-02T08:00Z", "2026-03-04T08:00Z", "2026-03-09T08:00Z"),
                    fires("0 8 * mar Mon,WED", utc("2026-01-01T00:00:00"), 3));
            assertEquals(fires("0 8 * 3 1,3", utc("2026-01-01T00:00:00"), 3),
                    fires("0 8 * MAR-mar mon,wed", utc("2026-01-01T00:00:00"), 3));
        }

        @Test
        void sevenAndZeroAreBothSunday() {
            // 2026-01-04 is a Sunday.
            List<String> sundays = List.of("2026-01-04T00:00Z", "2026-01-11T00:00Z");
            assertEquals(sundays, fires("0 0 * * 0", utc("2026-01-01T00:00:00"), 2));
            assertEquals(sundays, fires("0 0 * * 7", utc("2026-01-01T00:00:00"), 2));
            assertEquals(sundays, fires("0 0 * * SUN", utc("2026-01-01T00:00:00"), 2));
            assertEquals(List.of("2026-01-02T00:00Z", "2026-01-03T00:00Z", "2026-01-04T00:00Z",
                            "2026-01-09T00:00Z"),
                    fires("0 0 * * 5-7", utc("2026-01-01T00:00:00"), 4));
        }

        @Test
        void restrictedDayOfMonthAndDayOfWeekMatchEither() {
            // The 15th of each month or any Friday; 2026-02-15 is a Sunday.
            assertEquals(List.of("2026-02-06T00:00Z", "2026-02-13T00:00Z", "2026-02-15T00:00Z",
                            "2026-02-20T00:00Z", "2026-02-27T00:00Z", "2026-03-06T00:00Z"),
                    fires("0 0 15 * FRI", utc("2026-02-01T00:00:00"), 6));
        }

        @Test
        void dayOfMonthStartingWithStarIsAndedWithDayOfWeek() {
            // Odd days that are Mondays (Vixie cron: a field starting with '*' is unrestricted).
            assertEquals(List.of("2026-01-05T00:00Z", "2026-01-19T00:00Z", "2026-02-09T00:00Z"),
                    fires("0 0 */2 * MON", utc("2026-01-01T00:00:00"), 3));
        }

        @Test
        void dayOfMonthWithStarDayOfWeekMatchesOnlyThatDay() {
            assertEquals(List.of("2026-01-31T00:00Z", "2026-03-31T00:00Z", "2026-05-31T00:00Z"),
                    fires("0 0 31 * *", utc("2026-01-01T00:00:00"), 3));
        }

        @Test
        void leapDayFiresOnlyInLeapYearsAndSkipsNonLeapCenturies() {
            assertEquals(List.of("2028-02-29T00:00Z", "2032-02-29T00:00Z"),
                    fires("0 0 29 2 *", utc("2026-01-01T00:00:00"), 2));
            assertEquals(List.of("2104-02-29T00:00Z"), fires("0 0 29 2 *", utc("2096-03-01T00:00:00"), 1));
        }

        @Test
        void yearlyExpressionFarAwayIsFoundQuickly() {
            assertTimeoutPreemptively(Duration.ofSeconds(1), () ->
                    assertEquals(List.of("2027-01-01T00:00Z"), fires("0 0 1 1 *", utc("2026-01-01T00:00:00"), 1)));
        }

        @ParameterizedTest
        @CsvSource({
            "@yearly,   0 0 1 1 *",
            "@ANNUALLY, 0 0 1 1 *",
            "@monthly,  0 0 1 * *",
            "@weekly,   0 0 * * 0",
            "@daily,    0 0 * * *",
            "@midnight, 0 0 * * *",
            "@hourly,   0 * * * *",
        })
        void shortcutsMeanTheirClassicExpansion(String shortcut, String expansion) {
            ZonedDateTime start = utc("2026-05-17T13:45:00");
            assertEquals(fires(expansion, start, 3), fires(shortcut, start, 3));
        }

        @Test
        void fireTimesKeepTheZoneOfTheStart() {
            ZonedDateTime start = LocalDateTime.parse("2026-06-01T08:00").atZone(PARIS);
            assertEquals(PARIS, CronExpression.parse("0 9 * * *").next(start).getZone());
        }
    }

    @Nested
    class Seconds {
        @Test
        void sixFieldExpressionFiresOnItsSeconds() {
            assertEquals(List.of("2026-01-01T10:00:10Z", "2026-01-01T10:00:20Z", "2026-01-01T10:00:30Z"),
                    fires("*/10 * * * * *", utc("2026-01-01T10:00:03"), 3));
        }

        @Test
        void secondFieldCombinesWithTheOtherFields() {
            assertEquals(List.of("2026-01-01T12:00:30Z", "2026-01-02T12:00:30Z"),
                    fires("30 0 12 * * *", utc("2026-01-01T12:00:29.5"), 2));
            assertEquals(List.of("2026-01-01T10:05Z", "2026-01-01T10:10Z"),
                    fires("0 */5 * * * *", utc("2026-01-01T10:00:00"), 2));
        }

        @Test
        void fiveFieldExpressionStillFiresAtSecondZero() {
            assertEquals(List.of("2026-01-01T10:01Z"), fires("* * * * *", utc("2026-01-01T10:00:00.001"), 1));
        }
    }

    @Nested
    class DaylightSavingTime {
        @Test
        void parisSpringForwardFiresGapTimeOnceAtTheEndOfTheGap() {
            // 2026-03-29 02:00 Paris jumps to 03:00.
            ZonedDateTime start = LocalDateTime.parse("2026-03-28T12:00").atZone(PARIS);
            assertEquals(List.of("2026-03-29T03:00+02:00", "2026-03-30T02:30+02:00"),
                    fires("30 2 * * *", start, 2));
        }

        @Test
        void parisSpringForwardEveryMinuteFiresOnceForTheWholeGap() {
            ZonedDateTime start = LocalDateTime.parse("2026-03-29T01:58").atZone(PARIS);
            assertEquals(List.of("2026-03-29T01:59+01:00", "2026-03-29T03:00+02:00", "2026-03-29T03:01+02:00"),
                    fires("* * * * *", start, 3));
        }

        @Test
        void parisFallBackFiresRepeatedTimeOnceAtTheEarlierOffset() {
            // 2026-10-25 03:00 Paris goes back to 02:00: 02:30 happens twice.
            ZonedDateTime start = LocalDateTime.parse("2026-10-25T00:00").atZone(PARIS);
            assertEquals(List.of("2026-10-25T02:30+02:00", "2026-10-26T02:30+01:00"),
                    fires("30 2 * * *", start, 2));
        }

        @Test
        void newYorkSpringForwardFiresGapTimeOnceAtTheEndOfTheGap() {
            // 2026-03-08 02:00 New York jumps to 03:00.
            ZonedDateTime start = LocalDateTime.parse("2026-03-07T12:00").atZone(NEW_YORK);
            assertEquals(List.of("2026-03-08T03:00-04:00", "2026-03-09T02:30-04:00"),
                    fires("30 2 * * *", start, 2));
        }

        @Test
        void newYorkFallBackFiresRepeatedTimeOnceAtTheEarlierOffset() {
            // 2026-11-01 02:00 New York goes back to 01:00: 01:30 happens twice.
            ZonedDateTime start = LocalDateTime.parse("2026-11-01T00:00").atZone(NEW_YORK);
            assertEquals(List.of("2026-11-01T01:30-04:00", "2026-11-02T01:30-05:00"),
                    fires("30 1 * * *", start, 2));
        }

        @Test
        void newYorkFallBackStartingInTheRepeatedHourDoesNotFireItAgain() {
            ZonedDateTime secondPass = LocalDateTime.parse("2026-11-01T01:10").atZone(NEW_YORK).withLaterOffsetAtOverlap();
            assertEquals("2026-11-01T01:10-05:00", secondPass.toOffsetDateTime().toString());
            assertEquals(List.of("2026-11-01T02:00-05:00", "2026-11-01T02:01-05:00"),
                    fires("* * * * *", secondPass, 2));
        }
    }

    @Nested
    class Errors {
        private static String messageOf(String expression) {
            return assertThrows(IllegalArgumentException.class, () -> CronExpression.parse(expression)).getMessage();
        }

        @Test
        void outOfRangeValueNamesFieldValueAndRange() {
            assertEquals("cron field 'hour' value 25 is out of range 0-23 in '0 25 * * *'", messageOf("0 25 * * *"));
            assertEquals("cron field 'minute' value 60 is out of range 0-59 in '60 * * * *'", messageOf("60 * * * *"));
            assertEquals("cron field 'day-of-month' value 0 is out of range 1-31 in '0 0 0 * *'", messageOf("0 0 0 * *"));
            assertEquals("cron field 'month' value 13 is out of range 1-12 in '0 0 1 13 *'", messageOf("0 0 1 13 *"));
            assertEquals("cron field 'day-of-week' value 8 is out of range 0-7 in '0 0 * * 1-8'", messageOf("0 0 * * 1-8"));
            assertEquals("cron field 'minute' value 99999999999 is out of range 0-59 in '99999999999 * * * *'",
                    messageOf("99999999999 * * * *"));
        }

        @Test
        void wrongFieldCountNamesTheFields() {
            assertEquals("cron expression needs 5 fields (minute hour day-of-month month day-of-week) or 6 with a leading second,"
                    + " got 7 in '0 0 0 * * * *'", messageOf("0 0 0 * * * *"));
            assertEquals("cron expression needs 5 fields (minute hour day-of-month month day-of-week) or 6 with a leading second,"
                    + " got 0 in ''",
                    messageOf("   "));
        }

        @Test
        void secondFieldIsCheckedLikeTheOthers() {
            assertEquals("cron field 'second' value 60 is out of range 0-59 in '60 * * * * *'", messageOf("60 * * * * *"));
        }

        @Test
        void unknownNameSaysWhichNamesAreAllowed() {
            assertEquals("cron field 'month' value 'JANUARY' is not a number or a month name (JAN-DEC) in '0 0 1 JANUARY *'",
                    messageOf("0 0 1 JANUARY *"));
            assertEquals("cron field 'day-of-week' value 'FUN' is not a number or a day name (SUN-SAT) in '0 0 * * FUN'",
                    messageOf("0 0 * * FUN"));
            assertEquals("cron field 'hour' value 'MON' is not a number in '0 MON * * *'", messageOf("0 MON * * *"));
        }

        @Test
        void badStepSaysWhatAStepMustBe() {
            assertEquals("cron field 'minute' step '0' must be a whole number of at least 1 in '*/0 * * * *'",
                    messageOf("*/0 * * * *"));
            assertEquals("cron field 'minute' step 'x' must be a whole number of at least 1 in '*/x * * * *'",
                    messageOf("*/x * * * *"));
        }

        @Test
        void backwardRangeSaysToWriteTheSmallerValueFirst() {
            assertEquals("cron field 'hour' range 5-3 goes backwards; write the smaller value first or use a list"
                    + " in '0 5-3 * * *'", messageOf("0 5-3 * * *"));
        }

        @Test
        void emptyListElementSaysToRemoveTheComma() {
            assertEquals("cron field 'minute' '1,,2' has an empty list element; remove the extra comma in '1,,2 * * * *'",
                    messageOf("1,,2 * * * *"));
        }

        @Test
        void impossibleDayIsRejectedAtParse() {
            assertEquals("cron expression '0 0 30 2 *' never matches: no selected month has the selected day-of-month;"
                    + " choose a day that exists in the month (February has at most 29 days)", messageOf("0 0 30 2 *"));
            assertThrows(IllegalArgumentException.class, () -> CronExpression.parse("0 0 31 4,6,9,11 *"));
        }

        @Test
        void impossibleDayOfMonthIsAcceptedWhenDayOfWeekIsAlsoRestricted() {
            // The day fields are OR-ed, so Mondays in February still match.
            assertEquals(List.of("2026-02-02T00:00Z"), fires("0 0 30 2 MON", utc("2026-01-01T00:00:00"), 1));
        }

        @Test
        void unknownShortcutListsTheKnownOnes() {
            assertEquals("cron shortcut '@often' is unknown; use one of @yearly, @annually, @monthly, @weekly,"
                    + " @daily, @midnight, @hourly", messageOf("@often"));
        }

        @Test
        void nullIsRejected() {
            assertEquals("cron expression must not be null", messageOf(null));
        }
    }

    @Test
    void expressionIsKeptTrimmedAndDefinesEquality() {
        CronExpression cron = CronExpression.parse("  0 9 * * MON  ");
        assertEquals("0 9 * * MON", cron.expression());
        assertEquals("0 9 * * MON", cron.toString());
        assertEquals(CronExpression.parse("0 9 * * MON"), cron);
        assertEquals(CronExpression.parse("0 9 * * MON").hashCode(), cron.hashCode());
        assertNotEquals(CronExpression.parse("0 9 * * 1"), cron);
    }
}
