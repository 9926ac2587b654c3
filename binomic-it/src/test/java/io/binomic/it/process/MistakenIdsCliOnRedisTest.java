package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import io.binomic.it.RedisServer;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Found by an outside tester: job, batch and workflow ids look alike, and {@code binomic batch show}
 * of a workflow's id said only "a wrong id or broker". On Redis, where a batch's and a workflow's
 * records are keys of their own, an id of the other kind is named with the command that reads it.
 */
class MistakenIdsCliOnRedisTest {
    private final RedisServer redis = RedisServer.shared();
    private final String queue = "mistaken-" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void batchAndWorkflowCommandsNameAnIdOfTheOtherKind() {
        Task<String, Void> work = Task.builder("mistaken-work", String.class).queue(queue).build();
        UUID batch;
        UUID workflow;
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false).build();
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            batch = producer.batch().add(work, "a").submit().id();
            workflow = producer.submit(Workflow.builder().then("fetch", work, "a").build()).id();
        }
        CliRun batchShow = CliRun.of("batch", "show", "--broker", redis.url(), "--id", workflow.toString());
        assertEquals(1, batchShow.exit(), batchShow.toString());
        assertEquals("no batch " + workflow + " on broker " + redis.url() + ": it is the id of a workflow: binomic workflow show --id "
                + workflow, batchShow.err().strip());
        CliRun workflowShow = CliRun.of("workflow", "show", "--broker", redis.url(), "--id", batch.toString());
        assertEquals(1, workflowShow.exit(), workflowShow.toString());
        assertEquals("no workflow " + batch + " on broker " + redis.url() + ": it is the id of a batch: binomic batch show --id " + batch,
                workflowShow.err().strip());
        CliRun jobShow = CliRun.of("job", "show", "--broker", redis.url(), "--queue", queue, "--id", workflow.toString());
        assertEquals(1, jobShow.exit(), jobShow.toString());
        assertTrue(jobShow.err().strip().endsWith(": it is the id of a workflow: binomic workflow show --id " + workflow), jobShow.err());
        CliRun nothing = CliRun.of("batch", "show", "--broker", redis.url(), "--id", UUID.randomUUID().toString());
        assertTrue(nothing.err().contains(": a wrong id or broker, or a batch past its retention"), nothing.err());
    }
}
