package io.binomic.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.io.File;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** An argument type the JDK codec would encode at submit but not decode at the worker is refused when the task is registered. */
class ArgumentTypesTest {
    record Shape(CharSequence text) { }
    record Drawing(String title, List<Map<String, Shape>> layers) { }
    record Tree(String name, List<Tree> children, Optional<Instant> at, UUID id, int[] sizes) { }
    record Keyed(Map<Integer, String> byNumber) { }

    static final Task<Shape, Void> DRAW = Task.builder("draw", Shape.class).build();

    private static Optional<String> undecodable(Class<?> type) {
        return ArgumentTypes.undecodable(type, type.getSimpleName(), new HashSet<>());
    }

    @Test
    void aComponentTheBinderCannotBuildIsFoundInNestedRecordsListsAndMaps() {
        assertEquals(Optional.of("Shape.text is declared java.lang.CharSequence"), undecodable(Shape.class));
        assertEquals(Optional.of("Drawing.layers[]{}.text is declared java.lang.CharSequence"), undecodable(Drawing.class));
        assertEquals(Optional.of("File is declared java.io.File"), undecodable(File.class));
        assertTrue(undecodable(Keyed.class).orElseThrow().contains("JSON object keys are strings"), undecodable(Keyed.class).toString());
    }

    @Test
    void supportedTypesPassRecursiveRecordsIncluded() {
        assertEquals(Optional.empty(), undecodable(Tree.class));
        assertEquals(Optional.empty(), undecodable(String.class));
        assertEquals(Optional.empty(), undecodable(Void.class));
    }

    @Test
    void bindingTheTaskToAnInstanceOnTheJdkCodecIsRefusedNamingTaskComponentTypeAndFix() {
        BinomicConfig config = BinomicConfig.builder().broker(BrokerConfig.builder().url("memory://argument-types").build()).build();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Binomic.builder().config(config).handle(DRAW, shape -> null).build());

        assertEquals("task 'draw': argument Shape.text is declared java.lang.CharSequence, which the JSON codec json-jdk cannot"
                + " decode at the worker (it decodes " + JsonWriter.SUPPORTED_TYPES + "); declare a type it decodes (String for"
                + " text), or choose the Jackson codec with payloadCodec(\"jackson\")", e.getMessage());
    }

    @Test
    void submittingThroughTheJdkCodecIsRefusedToo() {
        BinomicConfig config = BinomicConfig.builder().broker(BrokerConfig.builder().url("memory://argument-types-submit").build()).build();
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> producer.submit(DRAW, new Shape("circle")));

            assertTrue(e.getMessage().startsWith("task 'draw': argument Shape.text is declared java.lang.CharSequence"), e.getMessage());
            assertEquals(0, producer.queueStats("default").ready(), "nothing was enqueued");
        }
    }

    @Test
    void anotherCodecIsNotHeldToTheJdkCodecsRules() {
        ArgumentTypes.requireDecodable(DRAW, "jackson");
        // A worker with another codec decodes what that codec wrote: its producers may use it.
        ArgumentTypes.requireDecodable(List.of(DRAW), "json-jdk", Set.of("json-jdk", "jackson"));
    }
}
