package io.binomic.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The attribute keys of the spans: OpenTelemetry's messaging conventions where they name the
 * thing, {@code binomic.*} for what only Binomic has.
 */
public final class MessagingAttributes {
    /** {@code messaging.system}: always {@value #SYSTEM}. */
    public static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    /** {@code messaging.destination.name}: the logical queue. */
    public static final AttributeKey<String> DESTINATION_NAME = AttributeKey.stringKey("messaging.destination.name");
    /** {@code messaging.operation}: {@code publish} on the submit's span, {@code process} on a run's. */
    public static final AttributeKey<String> OPERATION = AttributeKey.stringKey("messaging.operation");
    /** {@code messaging.operation.type}: {@code create} on the submit's span, {@code process} on a run's. */
    public static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    /** {@code messaging.operation.name}: {@code publish} or {@code process}, as {@link #OPERATION}. */
    public static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    /** {@code messaging.message.id}: the job's message id (absent on the span of a batch submit). */
    public static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    /** {@code messaging.batch.message_count}: how many jobs a {@code submitAll} sent. */
    public static final AttributeKey<Long> BATCH_MESSAGE_COUNT = AttributeKey.longKey("messaging.batch.message_count");
    /** {@code binomic.task}: the task's name. */
    public static final AttributeKey<String> TASK = AttributeKey.stringKey("binomic.task");
    /** {@code binomic.attempt}: the run's attempt, 1 for the first. */
    public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("binomic.attempt");
    /** {@code binomic.max_attempts}: the task's attempt budget. */
    public static final AttributeKey<Long> MAX_ATTEMPTS = AttributeKey.longKey("binomic.max_attempts");
    /** {@code binomic.outcome}: how the run ended, the lowercase name of a {@code RunObserver.RunOutcome}. */
    public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("binomic.outcome");
    /** {@code binomic.replayed_from}: on a replayed job's runs, the dead letter's message id it was replayed from. */
    public static final AttributeKey<String> REPLAYED_FROM = AttributeKey.stringKey("binomic.replayed_from");

    /** The value of {@link #MESSAGING_SYSTEM}. */
    public static final String SYSTEM = "binomic";

    private MessagingAttributes() { }
}
