package io.binomic.api;

/**
 * Dead letters counted by failure class and task: the view an operator starts from.
 *
 * @param queue the queue
 * @param task the task name
 * @param reason the dead-letter reason
 * @param errorClass the failure class
 * @param count how many dead letters share these values
 */
public record DeadLetterGroup(String queue, String task, DeadLetterReason reason, String errorClass, long count) {
}
