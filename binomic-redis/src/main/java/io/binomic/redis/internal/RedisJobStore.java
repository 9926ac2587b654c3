package io.binomic.redis.internal;

import io.binomic.api.JobHandle;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.redisson.api.RScript;
import org.redisson.api.RTopic;
import org.redisson.client.codec.StringCodec;

/**
 * Job records on Redis: a hash per tracked job ({@link RedisKeys#job}), changed by scripts
 * ({@code start_jobs.lua}, {@code cancel_job.lua}; the settle script ends them), and the queue's
 * channel of job events.
 */
final class RedisJobStore implements JobStore {
    private final RedisContext redis;

    RedisJobStore(RedisContext redis) {
        this.redis = redis;
    }

    @Override
    public Optional<JobRecord> readJob(String queue, UUID id) {
        Map<String, String> fields = redis.call("readJob " + id + " of '" + queue + "'",
                () -> redis.client().<String, String>getMap(redis.keys(queue).job(id), StringCodec.INSTANCE).readAllMap());
        return fields == null || fields.isEmpty() ? Optional.empty() : Optional.of(new JobRecord(fields));
    }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        if (starts.isEmpty()) {
            return Set.of();
        }
        Map<String, List<JobUpdate>> byQueue = new LinkedHashMap<>();
        starts.forEach(u -> byQueue.computeIfAbsent(u.queue(), q -> new ArrayList<>()).add(u));
        List<?> replies = redis.pipeline("startJobs on queues " + byQueue.keySet(), batch -> byQueue.forEach((queue, updates) -> {
            RedisKeys k = redis.keys(queue);
            List<Object> keys = new ArrayList<>();
            List<Object> args = new ArrayList<>();
            for (JobUpdate u : updates) {
                keys.add(k.job(u.id()));
                addJobArguments(args, u, k);
            }
            batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.START_JOBS,
                    RScript.ReturnType.LIST, keys, args.toArray());
        }));
        Set<UUID> notStarted = new HashSet<>();
        int reply = 0;
        for (List<JobUpdate> updates : byQueue.values()) {
            if (replies.get(reply++) instanceof List<?> positions) {
                for (Object position : positions) {
                    notStarted.add(updates.get(Math.toIntExact(ScriptReplies.toLong(position)) - 1).id());
                }
            }
        }
        return notStarted;
    }

    @Override
    public void updateRunningJob(JobUpdate update) {
        RedisKeys k = redis.keys(update.queue());
        redis.eval("progress of job " + update.id(), LuaScripts.UPDATE_RUNNING_JOB, RScript.ReturnType.LONG,
                List.of(k.job(update.id())), jobArguments(update, k));
    }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        RedisKeys k = redis.keys(cancelled.queue());
        long r = redis.evalWrite("cancel of job " + cancelled.id(), "the cancel is on the primary only; if it fails over first,"
                + " cancel again", LuaScripts.CANCEL_JOB, RScript.ReturnType.LONG, List.of(k.job(cancelled.id())),
                jobArguments(cancelled, k));
        return switch (Math.toIntExact(r)) {
            case 0 -> JobHandle.CancelOutcome.NOT_FOUND;
            case 1 -> JobHandle.CancelOutcome.ALREADY_ENDED;
            case 2 -> JobHandle.CancelOutcome.CANCEL_REQUESTED;
            default -> JobHandle.CancelOutcome.CANCELLED;
        };
    }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        RTopic topic = redis.client().getTopic(redis.keys(queue).jobEvents(), StringCodec.INSTANCE);
        int listenerId = redis.call("subscribe to job events of '" + queue + "'", () -> topic.addListener(String.class, (channel, text) -> {
            if (text.length() < 3) {
                return;
            }
            JobEvent.Kind kind = text.charAt(0) == 'C' ? JobEvent.Kind.CANCEL_REQUESTED : JobEvent.Kind.ENDED;
            try {
                listener.accept(new JobEvent(queue, UUID.fromString(text.substring(2)), kind));
            } catch (IllegalArgumentException e) {
                RedisContext.LOG.log(System.Logger.Level.DEBUG, "ignoring job event {0}", text);
            }
        }));
        return () -> topic.removeListener(listenerId);
    }

    private static Object[] jobArguments(JobUpdate update, RedisKeys k) {
        List<Object> args = new ArrayList<>();
        addJobArguments(args, update, k);
        return args.toArray();
    }

    /** A job update as the scripts' {@code apply_job} reads it (lib.lua). */
    static void addJobArguments(List<Object> args, JobUpdate update, RedisKeys k) {
        args.add(Integer.toString(update.set().size() * 2));
        ScriptReplies.addFields(args, update.set());
        args.add(Integer.toString(update.delete().size()));
        args.addAll(update.delete());
        args.add(Long.toString(update.expireAfter().toMillis()));
        args.add(k.jobEvents());
        args.add(update.ends() ? "E " + update.id() : "");
    }
}
