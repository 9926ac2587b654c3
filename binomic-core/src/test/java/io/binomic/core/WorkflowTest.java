package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A workflow's graph is checked when it is built: each refusal names the jobs at fault. */
class WorkflowTest {
    static final Task<String, Void> t = Task.builder("t", String.class).build();

    private static String refusal(Workflow.Builder b) { return assertThrows(IllegalArgumentException.class, b::build).getMessage(); }

    @Test
    void aCycleIsRefusedNamingItsJobs() {
        assertEquals("the workflow has a cycle: a -> b -> c -> a (each depends on the next); a job may depend only on jobs that do"
                + " not depend on it", refusal(Workflow.builder().add("a", t, "", Workflow.dependsOn("b"))
                .add("b", t, "", Workflow.dependsOn("c")).add("c", t, "", Workflow.dependsOn("a")).add("d", t, "")));
        assertEquals("job 'a' depends on itself: a cycle; remove it from its dependsOn",
                refusal(Workflow.builder().add("a", t, "", Workflow.dependsOn("a"))));
    }

    @Test
    void aDanglingDependencyADuplicateNameAndNoJobAreRefused() {
        assertEquals("job 'b' depends on 'resize', which the workflow does not have; its jobs are [a, b]",
                refusal(Workflow.builder().add("a", t, "").add("b", t, "", Workflow.dependsOn("resize"))));
        assertEquals("two jobs are named 'a': a workflow's job names are unique; rename one",
                refusal(Workflow.builder().add("a", t, "").add("a", t, "")));
        assertEquals("a workflow needs at least one job: add(name, task, argument) before build()", refusal(Workflow.builder()));
        assertThrows(IllegalArgumentException.class, () -> Workflow.dependsOn("a", "a"));
        assertThrows(IllegalArgumentException.class, () -> Workflow.dependsOn("a").ignoringFailureOf("b"));
    }

    @Test
    void jobsAreOrderedAfterTheirDependenciesAndAChainDependsOnTheStepBefore() {
        Workflow w = Workflow.builder().add("publish", t, "", Workflow.dependsOn("resize")).add("resize", t, "").build();
        assertEquals(List.of("resize", "publish"), w.nodes().stream().map(Workflow.Node::name).toList());

        Workflow chain = Workflow.builder().then("a", t, "").then("b", t, "").then("c", t, "").build();
        assertEquals(List.of(List.of(), List.of("a"), List.of("b")),
                chain.nodes().stream().map(n -> n.dependencies().names()).toList());
        assertEquals(Set.of("a", "b"), Workflow.dependsOn("a", "b")
                .whenDependencyFails(Workflow.DependencyFailure.RUN_ANYWAY).ignoringFailure());
    }

    @Test
    void aRootTakesOptionsWithoutDependencies() {
        SubmitOptions urgent = SubmitOptions.builder().priority(7).delay(Duration.ofSeconds(2)).build();
        Workflow w = Workflow.builder().add("a", t, "", urgent).add("b", t, "", urgent, Workflow.dependsOn("a")).build();
        assertEquals(List.of(urgent, urgent), w.nodes().stream().map(Workflow.Node::options).toList());
        assertEquals(List.of(), w.nodes().getFirst().dependencies().names());
        assertEquals("dependsOn() names no job: name at least one, or add a root job without it: add(name, task, argument) or"
                + " add(name, task, argument, options)", assertThrows(IllegalArgumentException.class, Workflow::dependsOn).getMessage());
    }

    @Test
    void aNullArgumentOrOneOfAnotherTypeIsRefusedNamingTheJob() {
        Task<Duration, Void> wait = Task.builder("wait", Duration.class).build();
        Task<Void, Void> tick = Task.builder("tick").build();
        assertEquals("job 'pause' (task 'wait') takes a java.time.Duration, got null; pass an argument (an empty record if there is"
                + " nothing to say)", assertThrows(IllegalArgumentException.class,
                () -> Workflow.builder().add("go", t, "").add("pause", wait, null, Workflow.dependsOn("go"))).getMessage());
        @SuppressWarnings({"unchecked", "rawtypes"})
        Task<Object, Void> raw = (Task) wait;
        assertEquals("job 'pause' (task 'wait') takes a java.time.Duration, got a java.lang.String",
                assertThrows(IllegalArgumentException.class, () -> Workflow.builder().add("pause", raw, "soon")).getMessage());
        assertEquals(1, Workflow.builder().add("tick", tick, null).build().nodes().size(), "a task without an argument takes null");
    }

    @Test
    void optionsAWorkflowCannotHonourAreRefusedNamingTheJobAndTheFix() {
        SubmitOptions unique = SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofMinutes(1))).build();
        assertEquals("job 'b' (task 't') has a unique key (SubmitOptions.unique): a workflow enqueues each of its jobs exactly once,"
                + " when its dependencies allow it; remove unique(...) from its options", assertThrows(IllegalArgumentException.class,
                () -> Workflow.builder().add("a", t, "").add("b", t, "", unique, Workflow.dependsOn("a"))).getMessage());
        Task<String, Void> uniqueTask = Task.builder("once", String.class).unique(Uniqueness.whileQueued(Duration.ofMinutes(1))).build();
        assertEquals("job 'a' (task 'once') is of a unique task (Task.Builder.unique): a workflow enqueues each of its jobs exactly"
                + " once, when its dependencies allow it; use a task without unique(...) for this job",
                assertThrows(IllegalArgumentException.class, () -> Workflow.builder().add("a", uniqueTask, "")).getMessage());
        assertEquals("job 'a' (task 't') has a partition key (SubmitOptions.partitionKey): a workflow's jobs go to the partitions of"
                + " their queue in turn; remove partitionKey(...) from its options", assertThrows(IllegalArgumentException.class,
                () -> Workflow.builder().add("a", t, "", SubmitOptions.builder().partitionKey("k").build())).getMessage());
    }
}
