package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.binomic.api.Task;
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
}
