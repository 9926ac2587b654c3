package io.binomic.api;

import java.time.Instant;
import java.util.Optional;

/**
 * Selects dead letters for listing, replay or purge. Empty criteria match everything.
 *
 * @param task only this task
 * @param reason only this reason
 * @param errorClass only this failure class (exact class name)
 * @param failedBefore only letters that failed before this instant
 */
public record DeadLetterFilter(Optional<String> task, Optional<DeadLetterReason> reason, Optional<String> errorClass,
                               Optional<Instant> failedBefore) {

    private static final DeadLetterFilter ALL = new DeadLetterFilter(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

    /** Matches every dead letter. */
    public static DeadLetterFilter all() { return ALL; }

    public DeadLetterFilter withTask(String name) {
        return new DeadLetterFilter(Optional.of(name), reason, errorClass, failedBefore);
    }

    public DeadLetterFilter withReason(DeadLetterReason r) {
        return new DeadLetterFilter(task, Optional.of(r), errorClass, failedBefore);
    }

    public DeadLetterFilter withErrorClass(String className) {
        return new DeadLetterFilter(task, reason, Optional.of(className), failedBefore);
    }

    public DeadLetterFilter withFailedBefore(Instant instant) {
        return new DeadLetterFilter(task, reason, errorClass, Optional.of(instant));
    }

    /** True when {@code letter} meets every criterion. */
    public boolean matches(DeadLetter letter) {
        return task.map(letter.task()::equals).orElse(true)
                && reason.map(r -> r == letter.failure().reason()).orElse(true)
                && errorClass.map(letter.failure().errorClass()::equals).orElse(true)
                && failedBefore.map(t -> letter.failure().failedAt().isBefore(t)).orElse(true);
    }
}
