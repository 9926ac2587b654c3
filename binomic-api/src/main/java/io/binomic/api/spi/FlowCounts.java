package io.binomic.api.spi;

/**
 * How many batches (or workflows) a broker holds by state, over every client of the broker: the
 * answer of {@link Batches#counts()} and {@link Workflows#counts()}. Kept by the steps that create
 * and end each one, never by a scan, so reading it costs one small read however many there are.
 *
 * <p>A batch or workflow is {@code open} from its submit until it ends, then counted in the state
 * it ended in, as its status says it ({@link io.binomic.api.BatchStatus#state()},
 * {@link io.binomic.api.WorkflowStatus#state()}): {@code succeeded} when every job of it succeeded,
 * {@code failed} when one was dead-lettered, cancelled on its own or skipped, and {@code cancelled}
 * when it was cancelled as a whole. The two differ in one case: a batch cancelled while its last
 * jobs ran, which all succeeded, is {@code succeeded} (its success callback ran), a workflow that
 * was cancelled is {@code cancelled} whatever its jobs did. The ended counts are not lowered when a
 * record's retention passes: they count every end since the counts began (Redis: since the hash
 * {@code <keyPrefix>:flows:counts} was created; a batch or workflow submitted before is not
 * counted). A workflow that a dead-letter replay resumes is counted open again, and taken from the
 * state it had ended in.
 *
 * @param open submitted and not ended
 * @param succeeded ended with every job succeeded
 * @param failed ended with some job dead-lettered, cancelled or skipped, without a cancel of the whole
 * @param cancelled ended after a cancel of the whole (a batch: with some job not succeeded)
 */
public record FlowCounts(long open, long succeeded, long failed, long cancelled) { }
