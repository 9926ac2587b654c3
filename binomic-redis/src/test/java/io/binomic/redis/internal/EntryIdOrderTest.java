package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The settle script's fence lists runs of consecutive ids: the worker must send them in Redis' order, not as text. */
class EntryIdOrderTest {
    @Test
    void entryIdsSortByTimeThenSequenceAsNumbersAndAnythingElseAfterThem() {
        List<String> ids = new ArrayList<>(List.of("not-an-id", "1733000000000-10", "999999999999-5", "1733000000000-9",
                "1733000000001-0", "abc"));
        ids.sort(RedisSettle::compareEntryIds);
        assertEquals(List.of("999999999999-5", "1733000000000-9", "1733000000000-10", "1733000000001-0", "abc", "not-an-id"), ids);
    }
}
