package io.binomic.api;

import io.binomic.api.spi.Message;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A message in the dead-letter queue, with why it is there.
 *
 * @param id the dead letter's own id in its queue's dead-letter store
 * @param queue the queue the message came from (and goes back to on replay)
 * @param task the task name ({@code "?"} when the entry was too broken to tell)
 * @param failure why and when it failed
 * @param message the decoded message; empty for {@link DeadLetterReason#DECODE_ERROR} of a broken entry
 * @param rawFields the stored fields as they were, kept so nothing is lost
 */
public record DeadLetter(String id, String queue, String task, Failure failure, Optional<Message> message,
                         Map<String, String> rawFields) {

    public DeadLetter {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(failure, "failure");
        Objects.requireNonNull(message, "message");
        rawFields = Map.copyOf(rawFields);
    }

    /**
     * What went wrong with a message.
     *
     * @param reason the dead-letter reason
     * @param errorClass the exception class name (or a short code such as {@code timeout})
     * @param errorMessage the exception message, possibly empty
     * @param stackHead the first lines of the stack trace, possibly empty
     * @param attempts how many attempts were made
     * @param failedAt when it was dead-lettered
     */
    public record Failure(DeadLetterReason reason, String errorClass, String errorMessage, String stackHead,
                          int attempts, Instant failedAt) {
        public Failure {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(errorClass, "errorClass");
            errorMessage = errorMessage == null ? "" : errorMessage;
            stackHead = stackHead == null ? "" : stackHead;
            Objects.requireNonNull(failedAt, "failedAt");
        }
    }
}
