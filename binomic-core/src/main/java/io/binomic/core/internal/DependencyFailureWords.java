package io.binomic.core.internal;

import io.binomic.api.WorkflowStatus;
import java.util.List;

/**
 * What a job of a workflow does when a job it depends on fails (is dead-lettered, cancelled or
 * skipped), in the words {@code binomic workflow show} and the dashboard's workflow page print,
 * named as {@code Workflow.DependencyFailure} and {@code Dependencies.ignoringFailureOf} are.
 */
public final class DependencyFailureWords {
    private DependencyFailureWords() { }

    /**
     * {@code -} for a job without dependencies, {@code skip} by default (it is skipped, and so are the
     * jobs that depend on it), {@code run anyway} when it ignores every dependency's failure, else
     * {@code ignore a, b; else skip}: it ignores those, and the failure of another one skips it.
     */
    public static String of(WorkflowStatus.Node node) {
        if (node.dependsOn().isEmpty()) {
            return "-";
        }
        if (node.runsAnyway()) {
            return "run anyway";
        }
        List<String> ignored = node.dependsOn().stream().filter(node.ignoringFailureOf()::contains).distinct().toList();
        return ignored.isEmpty() ? "skip" : "ignore " + String.join(", ", ignored) + "; else skip";
    }
}
