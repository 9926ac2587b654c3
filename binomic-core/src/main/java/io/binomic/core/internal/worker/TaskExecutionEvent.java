package io.binomic.core.internal.worker;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** JFR event per task execution: what ran, which attempt, and how it ended. */
@Name("io.binomic.TaskExecution")
@Label("Binomic Task Execution")
@Category({"Binomic"})
@Description("One execution of a task by a worker")
@StackTrace(false)
final class TaskExecutionEvent extends Event {
    @Label("Queue") String queue;
    @Label("Task") String task;
    @Label("Message Id") String messageId;
    @Label("Attempt") int attempt;
    @Label("Outcome") String outcome;
}
