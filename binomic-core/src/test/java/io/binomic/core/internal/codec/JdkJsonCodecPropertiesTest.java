package io.binomic.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.PayloadDecodeException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

class JdkJsonCodecPropertiesTest {
    private final JdkJsonCodec codec = new JdkJsonCodec();

    record Leaf(String text, long number, double ratio, Optional<String> label, List<Integer> counts) { }

    record Branch(String name, List<Leaf> leaves, Map<String, Leaf> byKey, Optional<Leaf> best, Optional<Branch> child) { }

    @Property(tries = 200)
    void nestedRecordsRoundTripEqual(@ForAll("branches") Branch branch) {
        assertEquals(branch, codec.decode(codec.encode(branch), Branch.class));
    }

    @Property(tries = 200)
    void arbitraryStringsRoundTripEqual(@ForAll("anyText") String text) {
        assertEquals(text, codec.decode(codec.encode(text), String.class));
    }

    /** A corrupted payload either still decodes or fails with a PayloadDecodeException, never anything else. */
    @Property(tries = 200)
    void corruptedPayloadsFailOnlyWithPayloadDecodeException(
            @ForAll("branches") Branch branch, @ForAll @IntRange(max = 10_000) int position, @ForAll char replacement) {
        String json = new String(codec.encode(branch), StandardCharsets.UTF_8);
        int at = position % json.length();
        String corrupted = json.substring(0, at) + replacement + json.substring(at + 1);
        try {
            codec.decode(corrupted.getBytes(StandardCharsets.UTF_8), Branch.class);
        } catch (PayloadDecodeException expected) {
            // the only acceptable failure
        }
    }

    @Provide
    Arbitrary<String> anyText() {
        // all() includes control characters, unpaired surrogates and supplementary pairs.
        return Arbitraries.oneOf(Arbitraries.strings().all().ofMaxLength(30),
                Arbitraries.of("\"", "\\", "\u2028", "😀", "\uD800", "\uDC00x", "\u0000", "</script>"));
    }

    @Provide
    Arbitrary<Branch> branches() {
        return branch(2);
    }

    private Arbitrary<Branch> branch(int depth) {
        Arbitrary<Optional<Branch>> child = depth == 0
                ? Arbitraries.just(Optional.empty())
                : branch(depth - 1).optional();
        return Combinators.combine(anyText(), leaf().list().ofMaxSize(3),
                        Arbitraries.maps(anyText(), leaf()).ofMaxSize(2), leaf().optional(), child)
                .as(Branch::new);
    }

    private Arbitrary<Leaf> leaf() {
        Arbitrary<Double> ratios = Arbitraries.oneOf(Arbitraries.doubles(),
                Arbitraries.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0,
                        Double.MIN_VALUE, Double.MAX_VALUE, 1e-300, 0.1));
        Arbitrary<Long> numbers = Arbitraries.oneOf(Arbitraries.longs(), Arbitraries.of(Long.MIN_VALUE, Long.MAX_VALUE));
        return Combinators.combine(anyText(), numbers, ratios, anyText().optional(),
                        Arbitraries.integers().list().ofMaxSize(4))
                .as(Leaf::new);
    }
}
