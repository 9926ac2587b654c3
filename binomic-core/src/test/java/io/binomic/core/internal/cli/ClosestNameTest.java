package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClosestNameTest {
    @Test
    void editDistanceCountsInsertionsDeletionsAndSubstitutions() {
        assertEquals(0, ClosestName.distance("queues", "queues"));
        assertEquals(1, ClosestName.distance("queus", "queues"));
        assertEquals(1, ClosestName.distance("mastor", "master"));
        assertEquals(2, ClosestName.distance("qeueus", "queues"));
        assertEquals(6, ClosestName.distance("", "queues"));
        assertEquals(1, ClosestName.distance("tabel", "table"), "two neighbours swapped are one typo");
        assertEquals(Optional.of("table"), ClosestName.to("tabel", List.of("jdbc", "user", "password-env", "table")));
    }

    @Test
    void theClosestNameIsSuggestedOnlyWhenNearEnough() {
        List<String> commands = List.of("master", "queues", "queue", "dashboard", "workers", "dlq", "job");
        assertEquals(Optional.of("queues"), ClosestName.to("queus", commands));
        assertEquals(Optional.of("dashboard"), ClosestName.to("dashbord", commands));
        assertEquals(Optional.empty(), ClosestName.to("frobnicate", commands));
        assertEquals(Optional.empty(), ClosestName.to("queue", commands), "an exact name is no typo");
    }
}
