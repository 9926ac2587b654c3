package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.core.internal.CoreAccess;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Found by a newcomer: {@code pauseTask("ccq", "wrok")} paused a task no one runs without a word, while "work" ran on;
 * {@code setLimits} of a mistyped queue warns, and so do these now.
 */
class QueuesPauseTaskTest {
    record Job(int n) { }

    private final CapturedWarnings captured = new CapturedWarnings(Queues.class);
    private final List<String> warnings = captured.lines();
    private final Task<Job, Void> work = Task.builder("work", Job.class).queue("ccq").build();
    private final Binomic binomic = Binomic.builder().handle(work, j -> null).build().start();

    @BeforeEach
    void capture() { captured.attach(); }

    @AfterEach
    void close() {
        captured.detach();
        binomic.close();
    }

    @Test
    void aPauseOfANameCloseToAKnownTaskIsSetWithAWarningNamingIt() {
        binomic.queues().pauseTask("ccq", "wrok");

        assertEquals(Set.of("wrok"), binomic.queues().pausedTasks("ccq"), "paused as given: a task may be paused before it runs");
        assertEquals(1, warnings.size(), warnings.toString());
        assertEquals("paused task 'wrok' of queue 'ccq', which is not known there: no task of this instance on that queue has the"
                + " name and it was not paused there; did you mean task 'work' of queue 'ccq'? If 'wrok' is meant, nothing more is"
                + " needed (its pause makes it known); else resumeTask(\"ccq\", \"wrok\") and pauseTask(\"ccq\", \"work\")",
                warnings.getFirst());

        binomic.queues().pauseTask("ccq", "wrok");
        assertEquals(1, warnings.size(), "its pause makes it known: " + warnings);
    }

    @Test
    void aPauseOfATaskOnAnotherQueueNamesItsQueue() {
        binomic.queues().pauseTask("mail", "work");

        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.getFirst().contains("; did you mean task 'work' of queue 'ccq'?"), warnings.getFirst());
        assertTrue(warnings.getFirst().endsWith("else resumeTask(\"mail\", \"work\") and pauseTask(\"ccq\", \"work\")"),
                warnings.getFirst());
        assertEquals(Set.of(), binomic.queues().pausedTasks("ccq"), "the task's own queue is untouched");
    }

    @Test
    void aResumeOfATaskThatIsNotPausedButCloseToOneWarnsThatNothingChanged() {
        binomic.queues().pauseTask("ccq", "work");
        binomic.queues().resumeTask("ccq", "wrok");

        assertEquals(Set.of("work"), binomic.queues().pausedTasks("ccq"));
        assertEquals(List.of("resumed task 'wrok' of queue 'ccq', which is not paused there: nothing changed (paused: [work]); did"
                + " you mean task 'work' of queue 'ccq'?"), warnings);
    }

    /** The CLI's --any-task: the name is meant as typed, and the CLI said so already. */
    @Test
    void aPauseAsTypedDoesNotWarn() {
        CoreAccess.get().setTaskPausedAsTyped(binomic, "ccq", "wrok", true);
        CoreAccess.get().setTaskPausedAsTyped(binomic, "ccq", "wokr", false);

        assertEquals(Set.of("wrok"), binomic.queues().pausedTasks("ccq"));
        assertEquals(List.of(), warnings);
    }

    @Test
    void aKnownTaskOrANewNameFarFromAnyIsPausedAndResumedWithoutAWord() {
        binomic.queues().pauseTask("ccq", "work");
        binomic.queues().pauseTask("ccq", "render");
        binomic.queues().resumeTask("ccq", "work");
        binomic.queues().resumeTask("ccq", "render");
        binomic.queues().resumeTask("ccq", "work");

        assertEquals(List.of(), warnings);
    }
}
