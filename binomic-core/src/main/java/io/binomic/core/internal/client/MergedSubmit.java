package io.binomic.core.internal.client;

import io.binomic.api.JobHandle;
import io.binomic.core.internal.FlowSubmits.MergedKey;
import java.util.Optional;

/**
 * A submit's handle that says whether the submit merged into a job stored before (a duplicate of a
 * unique job, a debounced replacement of the waiting one) instead of queueing a job of its own, and
 * under which key and of which kind: {@link JobHandle#mergedKey()} with whether it is a debounce key,
 * which the CLI's {@code job submit} says, since the options it was given need not name the kind (a
 * task's declaration on its module path does).
 */
public interface MergedSubmit {

    /** The key under which the handle's job, an earlier submit's, was found; empty when the submit queued its own. */
    Optional<MergedKey> mergedBy();

    /** The key {@code handle}'s submit merged under; empty for a fresh submit, or a handle that cannot say. */
    static Optional<MergedKey> of(JobHandle<?> handle) {
        return handle instanceof MergedSubmit m ? m.mergedBy() : Optional.empty();
    }
}
