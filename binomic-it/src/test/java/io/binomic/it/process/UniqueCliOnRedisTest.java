package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.core.Binomic;
import io.binomic.it.RedisServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@code binomic job submit --unique / --debounce / --delay} as an operator types them, against real Redis. */
class UniqueCliOnRedisTest {
    private final RedisServer redis = RedisServer.shared();
    private final String queue = "uniqcli-" + UUID.randomUUID().toString().substring(0, 8);

    private CliRun submit(String... more) {
        String[] base = {"job", "submit", "--broker", redis.url(), "--task", "refresh", "--queue", queue, "--json", "{\"feed\":7}",
            "--create"};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        CliRun run = CliRun.of(all);
        assertEquals(0, run.exit(), run.toString());
        return run;
    }

    private long streamLength() {
        return Long.parseLong(String.valueOf(redis.call("XLEN", "binomic:{" + queue + "}:stream")));
    }

    @Test
    void aDuplicateUniqueSubmitPrintsTheFirstJobsIdAndEnqueuesNothing() {
        UUID first = UUID.fromString(submit("--unique", "feed-7").out().strip());
        UUID again = UUID.fromString(submit("--unique", "feed-7", "--unique-scope", "queued", "--unique-ttl", "10m").out().strip());
        UUID other = UUID.fromString(submit("--unique", "feed-8").out().strip());

        assertEquals(first, again, "the duplicate returned the job holding the key");
        assertNotEquals(first, other);
        assertEquals(2, streamLength(), "two jobs enqueued, not three");
        CliRun shown = CliRun.of("job", "show", "--broker", redis.url(), "--queue", queue, "--id", first.toString());
        assertTrue(shown.out().contains("QUEUED"), shown.toString());
    }

    record Feed(int feed) { }

    /**
     * Found by an outside tester: a --wait submit merged into a job the application queued untracked printed the
     * state UNKNOWN; it now says it merged into that job, which cannot be awaited, and exits 1.
     */
    @Test
    void aWaitedSubmitMergedIntoAnUntrackedJobSaysItCannotBeAwaited() {
        Task<Feed, Void> refresh = Task.builder("refresh", Feed.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false).build();
        UUID existing;
        try (Binomic app = Binomic.builder().config(config).build().start()) {
            existing = app.submit(refresh, new Feed(7), SubmitOptions.builder()
                    .unique(Uniqueness.whileQueuedOrRunning(Duration.ofHours(1)), "feed-7").build()).id();
        }

        CliRun run = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "refresh", "--queue", queue, "--json",
                "{\"feed\":7}", "--unique", "feed-7", "--wait", "5s");

        assertEquals(1, run.exit(), run.toString());
        assertEquals(existing + "\nUNTRACKED\n", run.out());
        assertTrue(run.err().contains("binomic job submit: merged into job " + existing + ", which holds unique key 'feed-7'"), run.err());
        assertTrue(run.err().contains("binomic job submit: cannot wait for job " + existing + ": it keeps no status"), run.err());
        assertEquals(1, streamLength(), "one job, the application's");
    }

    @Test
    void aDebouncedSubmitReplacesTheWaitingJob() {
        UUID first = UUID.fromString(submit("--delay", "1h", "--debounce", "ada").out().strip());
        UUID second = UUID.fromString(submit("--delay", "1h", "--debounce", "ada").out().strip());

        assertEquals(first, second, "one job, replaced");
        assertEquals(1L, Long.parseLong(String.valueOf(redis.call("ZCARD", "binomic:{" + queue + "}:delayed"))));
        assertEquals(0, streamLength());
    }

    @Test
    void uniqueOptionsWithoutAKeyOrWithAnUnknownScopeAreUsageErrors() {
        CliRun noKey = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "refresh", "--queue", queue, "--unique-ttl", "5m");
        assertEquals(2, noKey.exit(), noKey.toString());
        assertTrue(noKey.err().contains("--unique-scope and --unique-ttl go with --unique KEY"), noKey.toString());

        CliRun badScope = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "refresh", "--queue", queue,
                "--unique", "k", "--unique-scope", "forever");
        assertEquals(2, badScope.exit(), badScope.toString());
        assertTrue(badScope.err().contains("--unique-scope must be queued, running or period, was 'forever'"), badScope.toString());

        CliRun debounceNow = CliRun.of("job", "submit", "--broker", redis.url(), "--task", "refresh", "--queue", queue, "--debounce", "k",
                "--create");
        assertEquals(2, debounceNow.exit(), debounceNow.toString());
        assertTrue(debounceNow.err().contains("debounce needs a delay"), debounceNow.toString());
        assertEquals(0, streamLength(), "nothing enqueued by a refused submit");
    }
}
