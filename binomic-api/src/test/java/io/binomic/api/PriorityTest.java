package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class PriorityTest {

    @Test
    void aTaskHasTheMiddlePriorityUnlessItDeclaresOne() {
        assertEquals(5, Task.builder("t", String.class).build().priority());
        assertEquals(9, Task.builder("t", String.class).priority(9).build().priority());
        assertEquals(0, Task.builder("t", String.class).priority(0).build().priority());
    }

    @Test
    void aTaskPriorityOutOfRangeOrSetTwiceIsRefusedNamingTheFieldTheRangeAndTheFix() {
        IllegalArgumentException high = assertThrows(IllegalArgumentException.class, () -> Task.builder("mail", String.class).priority(10));
        assertEquals("task 'mail': priority must be from 0 (lowest) to 9 (highest), was 10; leave it out for the default 5",
                high.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Task.builder("mail", String.class).priority(-1));
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> Task.builder("mail", String.class).priority(3).priority(4));
        assertEquals("task 'mail': priority is set twice (3, then 4); set it once", twice.getMessage());
    }

    @Test
    void aSubmitMayOverrideThePriorityOnceWithinTheRange() {
        assertEquals(OptionalInt.empty(), SubmitOptions.NONE.priority());
        SubmitOptions urgent = SubmitOptions.builder().priority(9).build();
        assertEquals(OptionalInt.of(9), urgent.priority());
        assertEquals(OptionalInt.of(9), urgent.toBuilder().build().priority(), "kept by toBuilder");
        assertEquals(OptionalInt.of(1), urgent.toBuilder().priority(1).build().priority(), "a copied value may be replaced once");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> SubmitOptions.builder().priority(12));
        assertEquals("SubmitOptions priority must be from 0 (lowest) to 9 (highest), was 12; leave it out for the default 5",
                bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SubmitOptions.builder().priority(1).priority(2));
    }

    @Test
    void theStarvationBoundIsABrokerOptionWithADefaultOfTen() {
        assertEquals(10, Priority.fairness(BrokerConfig.defaults()));
        assertEquals(0, Priority.fairness(BrokerConfig.defaults().toBuilder()
                .options(Map.of(Priority.FAIRNESS_OPTION, "0")).build()));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> Priority.fairness(
                BrokerConfig.defaults().toBuilder().options(Map.of(Priority.FAIRNESS_OPTION, "-3")).build()));
        assertEquals("broker option priority.fairness must be a whole number from 0 (strict priority) up, such as 10"
                + " (one fetch in ten starts at a lower priority), was '-3'", bad.getMessage());
    }
}
