package io.binomic.it;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Counts task executions in Redis itself, so that executions in several worker JVMs add up in one
 * place: {@code runs} (hash job -> executions started), {@code done} (set of jobs that completed).
 * Written with raw commands, independent of the broker under test.
 *
 * @param redisHost where Redis listens
 * @param redisPort its port
 * @param name the ledger's name (the test's queue)
 */
record Ledger(String redisHost, int redisPort, String name) implements TestApp.Runs {

    private String runsKey() {
        return "it-ledger:" + name + ":runs";
    }

    private String attemptsKey() {
        return "it-ledger:" + name + ":attempts";
    }

    /** Records the attempt number the worker handed to an execution of job {@code n}. */
    @Override
    public void sawAttempt(int n, int attempt) {
        Resp.call(redisHost, redisPort, "RPUSH", attemptsKey(), n + ":" + attempt);
    }

    /** Every (job, attempt) pair seen, as "n:attempt", in execution order. */
    List<String> attempts() {
        return ((List<?>) Resp.call(redisHost, redisPort, "LRANGE", attemptsKey(), "0", "-1")).stream().map(String::valueOf).toList();
    }

    private String doneKey() {
        return "it-ledger:" + name + ":done";
    }

    /** Records that job {@code n} started; returns how many times it has started, this time included. */
    @Override
    public long started(int n) {
        return (Long) Resp.call(redisHost, redisPort, "HINCRBY", runsKey(), Integer.toString(n), "1");
    }

    @Override
    public void finished(int n) {
        Object reply = Resp.call(redisHost, redisPort, "SADD", doneKey(), Integer.toString(n));
        if (reply instanceof Resp.Error e) {
            throw new IllegalStateException(e.message());
        }
    }

    Set<Integer> done() {
        Set<Integer> done = new HashSet<>();
        for (Object o : (List<?>) Resp.call(redisHost, redisPort, "SMEMBERS", doneKey())) {
            done.add(Integer.parseInt((String) o));
        }
        return done;
    }

    /** Executions per job. */
    Map<Integer, Long> runs() {
        Map<Integer, Long> runs = new HashMap<>();
        List<?> flat = (List<?>) Resp.call(redisHost, redisPort, "HGETALL", runsKey());
        for (int i = 0; i < flat.size(); i += 2) {
            runs.put(Integer.parseInt((String) flat.get(i)), Long.parseLong((String) flat.get(i + 1)));
        }
        return runs;
    }

    long totalRuns() {
        return runs().values().stream().mapToLong(Long::longValue).sum();
    }
}
