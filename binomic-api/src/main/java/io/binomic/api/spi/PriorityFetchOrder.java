package io.binomic.api.spi;

import io.binomic.api.Priority;

/**
 * In which order one fetch reads the priority levels of a queue, so that every broker bounds
 * starvation the same way: highest first, except that every {@code lowerFirstEvery}-th fetch
 * ({@link Priority#FAIRNESS_OPTION}) starts at a level below the highest, the lower levels
 * taking turns (it then goes down, and wraps around to the higher ones). One instance per queue and
 * broker client; thread-safe.
 */
public final class PriorityFetchOrder {
    private final int lowerFirstEvery;
    private long fetches;
    private int turns;

    /** @param lowerFirstEvery every how many fetches one starts at a lower level; 0 = strict priority */
    public PriorityFetchOrder(int lowerFirstEvery) {
        if (lowerFirstEvery < 0) {
            throw new IllegalArgumentException("lowerFirstEvery must be >= 0, was " + lowerFirstEvery);
        }
        this.lowerFirstEvery = lowerFirstEvery;
    }

    /**
     * Counts one fetch of a queue with several levels in use: 0 when it reads highest first, else
     * the turn ({@code 1, 2, ...}) of a fetch that starts lower ({@link #order}).
     */
    public synchronized int nextTurn() {
        if (lowerFirstEvery == 0 || ++fetches % lowerFirstEvery != 0) {
            return 0;
        }
        return ++turns;
    }

    /**
     * The order of one fetch: {@code levelsDescending} (distinct, highest first) as it is for turn 0;
     * for turn t, rotated to start at level {@code 1 + (t - 1) mod (m - 1)} (0-based) of the m levels.
     */
    public static int[] order(int[] levelsDescending, int turn) {
        int m = levelsDescending.length;
        if (m < 2 || turn <= 0) {
            return levelsDescending;
        }
        int start = 1 + (turn - 1) % (m - 1);
        int[] order = new int[m];
        for (int i = 0; i < m; i++) {
            order[i] = levelsDescending[(start + i) % m];
        }
        return order;
    }
}
