package io.binomic.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;
import static org.quicktheories.generators.SourceDSL.maps;
import static org.quicktheories.generators.SourceDSL.strings;

import io.binomic.api.PayloadDecodeException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Properties of {@link JdkJsonCodec}, generated and shrunk by QuickTheories; a failure prints the
 * seed to replay it with {@code -DQT_SEED=...}.
 */
class JdkJsonCodecPropertiesTest {
    /** jqwik ran each property 200 times; QuickTheories skips a repeated draw, so ask for some more. */
    private static final int MIN_CASES = 200;
    private static final int EXAMPLES = 240;
    /** A third of the texts come from a list of eight, whose repeats QuickTheories skips. */
    private static final int TEXT_EXAMPLES = 400;
    /** Percent of generated optionals that are empty. */
    private static final int EMPTY_PERCENT = 20;

    private final JdkJsonCodec codec = new JdkJsonCodec();

    record Leaf(String text, long number, double ratio, Optional<String> label, List<Integer> counts) { }

    record Branch(String name, List<Leaf> leaves, Map<String, Leaf> byKey, Optional<Leaf> best, Optional<Branch> child) { }

    @Test
    void nestedRecordsRoundTripEqual() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(EXAMPLES).forAll(branches()).checkAssert(branch -> {
            cases.incrementAndGet();
            assertEquals(branch, codec.decode(codec.encode(branch), Branch.class));
        });
        assertAtLeast(MIN_CASES, cases);
    }

    @Test
    void arbitraryStringsRoundTripEqual() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(TEXT_EXAMPLES).forAll(anyText()).checkAssert(text -> {
            cases.incrementAndGet();
            assertEquals(text, codec.decode(codec.encode(text), String.class));
        });
        assertAtLeast(MIN_CASES, cases);
    }

    /** A corrupted payload either still decodes or fails with a PayloadDecodeException, never anything else. */
    @Test
    void corruptedPayloadsFailOnlyWithPayloadDecodeException() {
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(EXAMPLES)
                .forAll(branches(), integers().between(0, 10_000), Generate.characters(Character.MIN_VALUE, Character.MAX_VALUE))
                .checkAssert((branch, position, replacement) -> {
                    cases.incrementAndGet();
                    String json = new String(codec.encode(branch), StandardCharsets.UTF_8);
                    int at = position % json.length();
                    String corrupted = json.substring(0, at) + replacement + json.substring(at + 1);
                    try {
                        codec.decode(corrupted.getBytes(StandardCharsets.UTF_8), Branch.class);
                    } catch (PayloadDecodeException expected) {
                        // the only acceptable failure: anything else thrown fails the property
                    }
                });
        assertAtLeast(MIN_CASES, cases);
    }

    private static void assertAtLeast(int expected, AtomicInteger cases) {
        assertTrue(cases.get() >= expected, () -> "only " + cases.get() + " distinct cases ran, expected " + expected);
    }

    /**
     * Any UTF-16 text up to 30 chars (control characters, unpaired surrogates), text of any code
     * points (supplementary pairs), or one of the classic troublemakers.
     */
    static Gen<String> anyText() {
        return Generate.oneOf(
                strings().betweenCodePoints(Character.MIN_VALUE, Character.MAX_VALUE).ofLengthBetween(0, 30),
                strings().betweenCodePoints(Character.MIN_CODE_POINT, Character.MAX_CODE_POINT).ofLengthBetween(0, 30),
                Generate.pick(List.of("\"", "\\", "\u2028", "😀", "\uD800", "\uDC00x", "\u0000", "</script>")));
    }

    static Gen<Branch> branches() {
        return branch(2);
    }

    private static Gen<Branch> branch(int depth) {
        Gen<Optional<Branch>> child = depth == 0
                ? Generate.constant(Optional.empty())
                : branch(depth - 1).toOptionals(EMPTY_PERCENT);
        return anyText().zip(lists().of(leaf()).ofSizeBetween(0, 3),
                        maps().of(anyText(), leaf()).ofSizeBetween(0, 2), leaf().toOptionals(EMPTY_PERCENT), child,
                        Branch::new);
    }

    private static Gen<Leaf> leaf() {
        Gen<Double> ratios = Generate.oneOf(doubles().any(),
                Generate.pick(List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0,
                        Double.MIN_VALUE, Double.MAX_VALUE, 1e-300, 0.1)));
        Gen<Long> numbers = Generate.oneOf(longs().all(), Generate.pick(List.of(Long.MIN_VALUE, Long.MAX_VALUE)));
        return anyText().zip(numbers, ratios, anyText().toOptionals(EMPTY_PERCENT),
                        lists().of(integers().all()).ofSizeBetween(0, 4),
                        Leaf::new);
    }
}
