package io.binomic.core.internal.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.codec.JdkJsonCodec;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The messages of one submit call: each its own id, payload and limit key, the rest as one submit would build it. */
class JobMessagesTest {
    private final JobMessages messages = new JobMessages(new JdkJsonCodec(), 64, Clock.systemUTC(), null);
    private final Task<String, String> task = Task.builder("t", String.class, String.class).queue("q").priority(7)
            .keepStatusFor(Duration.ofMinutes(5)).concurrencyLimitPerKey(2).limitKey(s -> "key-" + s).build();
    private final SubmitOptions options = SubmitOptions.builder().headers(Map.of("tenant", "acme")).build();

    @Test
    void everyMessageOfACallIsBuiltAsASingleSubmitWouldBuildIt() {
        List<Message> built = messages.ofArguments(task, List.of("a", "b", "c"), options, null);
        assertEquals(3, built.size());
        assertEquals(3, built.stream().map(Message::id).distinct().count());
        for (int i = 0; i < 3; i++) {
            Message m = built.get(i);
            String argument = List.of("a", "b", "c").get(i);
            Message single = messages.ofArgument(task, argument, options, null, m.id());
            assertEquals("\"" + argument + "\"", new String(m.payload(), StandardCharsets.UTF_8));
            assertEquals(Optional.of("key-" + argument), m.limitKey());
            assertEquals(single.wireHeaders(), m.wireHeaders());
            assertEquals(single, m.withAttempt(1, single.enqueuedAt()));
        }
        assertNotEquals(built.get(0).id(), built.get(1).id());
    }

    @Test
    void aLaterArgumentIsCheckedAsTheFirstIs() {
        String tooLarge = "x".repeat(100);
        assertThrows(PayloadTooLargeException.class, () -> messages.ofArguments(task, List.of("a", tooLarge), options, null));
        @SuppressWarnings({"unchecked", "rawtypes"})
        List<String> mixed = (List) Arrays.asList("a", 1);
        IllegalArgumentException wrongType = assertThrows(IllegalArgumentException.class, () -> messages.ofArguments(task, mixed, options, null));
        assertEquals("task 't' takes a java.lang.String, got a java.lang.Integer", wrongType.getMessage());
    }
}
