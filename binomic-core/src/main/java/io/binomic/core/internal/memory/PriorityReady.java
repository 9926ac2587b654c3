package io.binomic.core.internal.memory;

import io.binomic.api.Priority;
import io.binomic.api.spi.PriorityFetchOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The ready messages of one queue of the memory broker: one FIFO per priority level, read highest
 * first, with the starvation bound of {@link PriorityFetchOrder} (the same as the Redis broker's).
 * With only the default priority in use it is one FIFO. Not thread-safe:
 * the broker's lock guards it.
 */
final class PriorityReady<E> {
    private final List<ArrayDeque<E>> levels = new ArrayList<>();
    private final ToIntFunction<E> priority;
    private final PriorityFetchOrder order;
    private int size;
    /** The level order of the fetch under way ({@link #beginFetch}). */
    private int[] current = {};

    PriorityReady(int lowerFirstEvery, ToIntFunction<E> priority) {
        this.priority = priority;
        this.order = new PriorityFetchOrder(lowerFirstEvery);
        for (int p = Priority.MIN; p <= Priority.MAX; p++) {
            levels.add(new ArrayDeque<>());
        }
    }

    void addLast(E e) {
        levels.get(priority.applyAsInt(e)).addLast(e);
        size++;
    }

    boolean isEmpty() { return size == 0; }

    int size() { return size; }

    /** Chooses the level order of one fetch (highest first; now and then a lower level first). */
    void beginFetch() {
        int n = 0;
        int[] used = new int[levels.size()];
        for (int p = Priority.MAX; p >= Priority.MIN; p--) {
            if (!levels.get(p).isEmpty()) {
                used[n++] = p;
            }
        }
        current = n < 2 ? Arrays.copyOf(used, n) : PriorityFetchOrder.order(Arrays.copyOf(used, n), order.nextTurn());
    }

    /** The next message of this fetch, by the order {@link #beginFetch} chose; null when empty. */
    E pollFirst() {
        for (int p : current) {
            E e = levels.get(p).pollFirst();
            if (e != null) {
                size--;
                return e;
            }
        }
        for (int p = Priority.MAX; p >= Priority.MIN; p--) { // levels filled since beginFetch
            E e = levels.get(p).pollFirst();
            if (e != null) {
                size--;
                return e;
            }
        }
        return null;
    }
}
