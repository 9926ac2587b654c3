package io.binomic.api.spi;

import io.binomic.api.Priority;

/**
 * In which order one fetch reads the priority levels of a queue, so that every broker bounds
 * starvation the same way: highest first, except that every {@code lowerFirstEvery}-th fetch
 * ({@link Priority#LOWER_FIRST_EVERY_OPTION}) starts at a level below the highest, the lower levels
 * taking turns (then goes down, and wraps around to the higher ones). One instance per queue and
 * broker client; thread-safe.
 */
public final class PriorityFetchOrder {
    private final int lowerFirstEvery;
    private long fetches;
    private int turn;

    /** @param lowerFirstEvery every how many fetches one starts at a lower level; 0 = strict priority */
    public PriorityFetchOrder(int lowerFirstEvery) {
        if (lowerFirstEvery < 0) {
            throw new IllegalArgumentException("lowerFirstEvery must be >= 0, was " + lowerFirstEvery);
        }
        this.lowerFirstEvery = lowerFirstEvery;
    }

    /**
     * The order for the next fetch: {@code levelsDescending} (distinct priorities, highest first) as
     * it is, or rotated to start at a lower level on every {@code lowerFirstEvery}-th call. Counts a
     * fetch only when there are at least two levels.
     */
    public synchronized int[] next(int[] levelsDescending) {
        int m = levelsDescending.length;
        if (m < 2 || lowerFirstEvery == 0 || ++fetches % lowerFirstEvery != 0) {
            return levelsDescending;
        }
        int start = 1 + Math.floorMod(turn++, m - 1);
        int[] order = new int[m];
        for (int i = 0; i < m; i++) {
            order[i] = levelsDescending[(start + i) % m];
        }
        return order;
    }
}
