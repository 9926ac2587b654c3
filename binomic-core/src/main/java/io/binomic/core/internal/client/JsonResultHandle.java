package io.binomic.core.internal.client;

import io.binomic.api.JobHandle;
import io.binomic.api.JobStatus;
import io.binomic.core.internal.FlowSubmits.MergedKey;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * A handle whose result is the stored JSON text, for callers that do not know the result type;
 * with the key its submit merged under when it merged into an earlier job ({@link MergedSubmit}), else null.
 */
record JsonResultHandle(JobHandle<Void> inner, MergedKey merge) implements JobHandle<String>, MergedSubmit {
    @Override
    public Optional<MergedKey> mergedBy() { return Optional.ofNullable(merge); }

    @Override
    public Optional<String> mergedKey() { return mergedBy().map(MergedKey::key); }

    @Override
    public UUID id() { return inner.id(); }

    @Override
    public String queue() { return inner.queue(); }

    @Override
    public JobStatus status() { return inner.status(); }

    @Override
    public CompletableFuture<String> result() { return inner.result().thenApply(ignored -> inner.status().result().orElse(null)); }

    @Override
    public String await(Duration timeout) {
        inner.await(timeout);
        return inner.status().result().orElse(null);
    }

    @Override
    public CancelOutcome cancel() { return inner.cancel(); }
}
