package io.binomic.core.internal;

import io.binomic.api.JobState;
import io.binomic.core.Binomic;
import java.util.Optional;
import java.util.UUID;

/**
 * What an id looked up as one kind and not found is instead: job, batch and workflow ids are all
 * UUIDv7s, easily pasted into the wrong command or page. Read only on the way to a "not found", so
 * a lookup that finds what it was asked for pays nothing.
 */
public final class MistakenIds {
    public static final String JOB = "job";
    public static final String BATCH = "batch";
    public static final String WORKFLOW = "workflow";

    private MistakenIds() { }

    /**
     * {@link #BATCH}, {@link #WORKFLOW} or {@link #JOB} (one of the queues {@code binomic} knows)
     * when {@code id}, not found as a {@code asked}, is one of those; empty when it is none, or the
     * broker could not tell (a hint must never fail the refusal it adds to).
     */
    public static Optional<String> kindOf(Binomic binomic, UUID id, String asked) {
        if (!asked.equals(WORKFLOW) && found(() -> binomic.workflow(id).status().isPresent())) {
            return Optional.of(WORKFLOW);
        }
        if (!asked.equals(BATCH) && found(() -> binomic.batch(id).status().isPresent())) {
            return Optional.of(BATCH);
        }
        if (!asked.equals(JOB) && found(() -> binomic.job(id).status().state() != JobState.UNKNOWN)) {
            return Optional.of(JOB);
        }
        return Optional.empty();
    }

    /** "it is the id of a workflow: binomic workflow show --id ID", for a refusal; {@code verb} is show or cancel. */
    public static String sentence(String kind, UUID id, String verb) {
        return "it is the id of a " + kind + ": binomic " + kind + " " + verb + " --id " + id;
    }

    private static boolean found(java.util.function.BooleanSupplier read) {
        try {
            return read.getAsBoolean();
        } catch (RuntimeException e) {
            return false; // no such capability, no queue known, the broker not answering: no hint
        }
    }
}
