package io.binomic.core.internal.client;

import io.binomic.api.JobHandle;

/**
 * A submit's handle that says whether the submit merged into a job stored before (a duplicate of a
 * unique job, a debounced replacement of the waiting one) instead of queueing a job of its own: the
 * CLI's {@code job submit} says so, since the job it waits on is then the earlier submitter's, tracked
 * or not as that submit chose.
 */
public interface MergedSubmit {

    /** True when the handle's job is an earlier submit's; nothing new was queued. */
    boolean merged();

    /** Whether {@code handle} is of a submit that merged into an earlier job; false for a handle that cannot say. */
    static boolean of(JobHandle<?> handle) {
        return handle instanceof MergedSubmit m && m.merged();
    }
}
