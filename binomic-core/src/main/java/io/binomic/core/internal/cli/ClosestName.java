package io.binomic.core.internal.cli;

import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;

/** The "did you mean" of a mistyped name: the known name fewest edits away, when it is near enough to be the one meant. */
public final class ClosestName {
    private ClosestName() { }

    /** The candidate closest to {@code typed} by edit distance, if at most a third of its letters (and at least one) differ; none for a known name. */
    public static Optional<String> to(String typed, Collection<String> candidates) {
        if (candidates.contains(typed)) {
            return Optional.empty();
        }
        int allowed = Math.max(1, typed.length() / 3);
        return candidates.stream()
                .map(c -> new Scored(c, distance(typed, c)))
                .filter(s -> s.distance() <= allowed)
                .min(Comparator.comparingInt(Scored::distance))
                .map(Scored::name);
    }

    /** "; did you mean 'x'?" or nothing. */
    public static String hint(String typed, Collection<String> candidates) {
        return to(typed, candidates).map(name -> "; did you mean '" + name + "'?").orElse("");
    }

    private record Scored(String name, int distance) { }

    /**
     * Edit distance: insertions, deletions, substitutions and swaps of two neighbouring characters each count one, so that
     * the commonest typo, two letters typed in the wrong order ({@code tabel}), is one edit away and not two.
     */
    static int distance(String a, String b) {
        int[] beforePrevious = new int[b.length() + 1];
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    current[j] = Math.min(current[j], beforePrevious[j - 2] + 1);
                }
            }
            int[] swap = beforePrevious;
            beforePrevious = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
