package io.binomic.redis.internal;

import static io.binomic.redis.internal.RedisKeys.GROUP;

import io.binomic.api.spi.Message;
import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimits;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Rate and concurrency limits on Redis: admitted by {@link LuaScripts#ADMIT} at fetch, a slot
 * released in the settle script; a queue's own limits in a hash ({@link RedisKeys#queueLimits}),
 * which the admission script reads itself: the queue limits a caller passes
 * ({@link FlowLimit#QUEUE_LIMIT_ID}) stand for "the queue's limits", whatever their values.
 */
final class RedisFlowLimits implements FlowLimits, FlowLimitReadings {
    /** How long a message waiting for a concurrency slot stays in the delayed set if no release moves it back first. */
    static final Duration SLOT_WAIT_FALLBACK = Duration.ofSeconds(10);

    /**
     * How many members of a queue's delayed set one step of {@link LuaScripts#RESPACE_RATE_LIMITED}
     * reads: a few milliseconds of Redis's time, so a change of limits over a large backlog does not
     * block other clients while it makes the rate-limited jobs due.
     */
    static final int RESPACE_STEP = 1_000;

    private final RedisContext redis;
    private final int respaceStep;

    RedisFlowLimits(RedisContext redis) {
        this(redis, RESPACE_STEP);
    }

    RedisFlowLimits(RedisContext redis, int respaceStep) {
        if (respaceStep < 1) {
            throw new IllegalArgumentException("respaceStep must be >= 1, was " + respaceStep);
        }
        this.redis = redis;
        this.respaceStep = respaceStep;
    }

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests) {
        return admit(consumer, requests, Duration.ZERO);
    }

    /** One {@link LuaScripts#ADMIT} per queue, every queue in one pipeline: one round trip for a whole fetch. */
    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
        long holdMicros = Math.max(0, maxHold.toNanos() / 1000);
        if (requests.isEmpty()) {
            return List.of();
        }
        Map<String, List<Admission.Request>> byQueue = new LinkedHashMap<>();
        for (var r : requests) {
            // per stream: a priority level's deliveries are pending on its own stream (RedisPriorities)
            byQueue.computeIfAbsent(RedisPriorities.streamOf(r.delivery()), q -> new ArrayList<>()).add(r);
        }
        String what = "admit on queues " + byQueue.keySet().stream().map(RedisPriorities::queueOf).distinct().toList();
        List<?> replies = redis.pipelineWrite(what, "the decisions stand on the primary; a lost one leaves its delivery pending for"
                + " reclaim", batch -> byQueue.forEach((stream, list) -> {
                    RedisKeys k = redis.keys(RedisPriorities.queueOf(stream));
                    // the limits hash: the script applies the queue's limits as stored now, not as this worker last read them
                    List<Object> keys = new ArrayList<>(List.of(RedisPriorities.streamKey(k, stream), k.delayed(), k.held(),
                            k.queueLimits()));
                    List<Object> args = new ArrayList<>(List.of(GROUP, consumer, Long.toString(SLOT_WAIT_FALLBACK.toMillis()),
                            Long.toString(holdMicros), Long.toString(holdMicros / 2)));
                    addIdRange(list, args);
                    // the distinct lists of limits, each sent once: a queue's limit is every delivery's
                    Map<List<FlowLimit>, Integer> sets = new LinkedHashMap<>();
                    for (var r : list) {
                        sets.putIfAbsent(r.limits(), sets.size() + 1);
                    }
                    args.add(Integer.toString(sets.size()));
                    sets.keySet().forEach(limits -> addLimitArguments(limits, args));
                    for (var r : list) {
                        addAdmitArguments(r, k, keys, args, sets.get(r.limits()));
                    }
                    batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.ADMIT, RScript.ReturnType.LIST,
                            keys, args.toArray());
                }));
        List<Admission> out = new ArrayList<>(requests.size());
        int reply = 0;
        for (var list : byQueue.values()) {
            // a letter per delivery, then a due time and a hold per one that does not run now
            List<?> flat = (List<?>) replies.get(reply++);
            String codes = String.valueOf(flat.get(0));
            int next = 1;
            for (int i = 0; i < list.size(); i++) {
                var decision = switch (codes.charAt(i)) {
                    case 'R' -> Admission.Decision.RUN;
                    case 'H' -> Admission.Decision.HOLD;
                    case 'W' -> Admission.Decision.WAIT_RATE;
                    case 'S' -> Admission.Decision.WAIT_SLOT;
                    default -> Admission.Decision.NOT_PENDING;
                };
                if (decision == Admission.Decision.RUN || decision == Admission.Decision.NOT_PENDING) {
                    out.add(new Admission(list.get(i).delivery(), decision, Optional.empty(), Duration.ZERO));
                    continue;
                }
                long dueMicros = ScriptReplies.toLong(flat.get(next));
                long heldMicros = ScriptReplies.toLong(flat.get(next + 1));
                next += 2;
                out.add(new Admission(list.get(i).delivery(), decision,
                        // a waiting message is due in whole milliseconds (rounded up), as its job record says
                        Optional.of(decision == Admission.Decision.HOLD ? Instant.EPOCH.plus(dueMicros, ChronoUnit.MICROS)
                                : Instant.ofEpochMilli(Math.floorDiv(dueMicros + 999, 1000))),
                        Duration.of(heldMicros, ChronoUnit.MICROS)));
            }
        }
        return out;
    }

    /**
     * The lowest and the highest entry id of {@code list}: the range of the script's one XPENDING for
     * the fence, worked out here, where comparing ids costs the worker little and Redis nothing.
     */
    private static void addIdRange(List<Admission.Request> list, List<Object> args) {
        String lo = null;
        String hi = null;
        for (var r : list) {
            String id = RedisPriorities.entryId(r.delivery().receipt());
            if (lo == null || compareIds(id, lo) < 0) {
                lo = id;
            }
            if (hi == null || compareIds(id, hi) > 0) {
                hi = id;
            }
        }
        args.add(lo);
        args.add(hi);
    }

    /** Stream entry ids ("ms-seq") in stream order: milliseconds, then sequence, each a number. */
    private static int compareIds(String a, String b) {
        int da = a.indexOf('-');
        int db = b.indexOf('-');
        int c = Long.compare(Long.parseLong(a, 0, da, 10), Long.parseLong(b, 0, db, 10));
        return c != 0 ? c : Long.compare(Long.parseLong(a, da + 1, a.length(), 10), Long.parseLong(b, db + 1, b.length(), 10));
    }

    private static void addLimitArguments(List<FlowLimit> limits, List<Object> args) {
        args.add(Integer.toString(limits.size()));
        for (var limit : limits) {
            args.addAll(List.of(limit.kind() == FlowLimit.Kind.RATE ? "r" : "c", limit.id(), Integer.toString(limit.permits()),
                    Long.toString(limit.intervalMicros()), Integer.toString(limit.burst())));
        }
    }

    /**
     * A delivery's two arguments: its entry id, and its other fields in one string (admit.lua says
     * which), as alike from one delivery to the next as they can be, since the script parses each
     * distinct one once: a tracked job's record is the next of the keys, not a number of its own.
     */
    private static void addAdmitArguments(Admission.Request r, RedisKeys k, List<Object> keys, List<Object> args, int set) {
        Delivery d = r.delivery();
        Message m = d.message().orElseThrow();
        if (m.isTracked()) {
            keys.add(k.job(m.id()));
        }
        args.add(RedisPriorities.entryId(d.receipt()));
        args.add(d.deliveryCount() + " " + m.attempt() + (m.isRateAdmitted() ? " 1" : " 0") + (m.isTurn() ? " 1" : " 0")
                + (m.isTracked() ? " 1 " : " 0 ") + set);
    }

    @Override
    public int slotsHeld(String queue, String limitId) {
        Long n = redis.call("slotsHeld of '" + queue + "'", () -> redis.client().getScoredSortedSet(redis.keys(queue).slots(limitId),
                StringCodec.INSTANCE).size()).longValue();
        return Math.toIntExact(n);
    }

    /**
     * Per limit a ZCARD of its slots and of its line and an HMGET of its rate state, all in one
     * pipeline: commands a reader ACL user has, on keys of one hash tag (one Cluster slot). The turns
     * ahead are counted on this host's clock against Redis' times: a skew between the two clocks moves
     * the count by the skew divided by the limit's interval, about nothing for a skew of milliseconds
     * under a limit of seconds, a few under 1,000/s.
     */
    @Override
    public Map<String, Reading> read(String queue, List<String> limitIds) {
        if (limitIds.isEmpty()) {
            return Map.of();
        }
        RedisKeys k = redis.keys(queue);
        List<?> replies = redis.pipeline("read the state of the limits of '" + queue + "'", batch -> limitIds.forEach(id -> {
            batch.getScoredSortedSet(k.slots(id), StringCodec.INSTANCE).sizeAsync();
            batch.getScoredSortedSet(k.slotWaiters(id), StringCodec.INSTANCE).sizeAsync();
            batch.<String, String>getMap(k.rate(id), StringCodec.INSTANCE).getAllAsync(Set.of("tu", "ru", "iu"));
        }));
        Instant at = Instant.now();
        long now = at.getEpochSecond() * 1_000_000 + at.getNano() / 1000;
        Map<String, Reading> out = new LinkedHashMap<>();
        for (int i = 0; i < limitIds.size(); i++) {
            Map<?, ?> rate = (Map<?, ?>) replies.get(3 * i + 2);
            long turns = rate.get("iu") == null ? 0 : Reading.turnsAhead(micros(rate.get("tu")), micros(rate.get("ru")), micros(rate.get("iu")), now);
            out.put(limitIds.get(i), new Reading(ScriptReplies.toLong(replies.get(3 * i)), ScriptReplies.toLong(replies.get(3 * i + 1)), turns));
        }
        return out;
    }

    /** A time or interval of a rate limit's hash, in µs; 0 when absent. */
    private static long micros(Object field) { return field == null ? 0 : ScriptReplies.toLong(field); }


    @Override
    public Map<String, QueueLimits> queueLimits(List<String> queues) {
        return redis.readHashes("limits", queues, RedisKeys::queueLimits, RedisFlowLimits::decodeLimits,
                "binomic queue limit {0} ...", false);
    }

    private static QueueLimits decodeLimits(Map<?, ?> fields) {
        var b = QueueLimits.builder();
        Object permits = fields.get("rate.permits");
        if (permits != null) {
            var rate = RateLimit.of(Integer.parseInt(String.valueOf(permits)),
                    Duration.ofMillis(Long.parseLong(String.valueOf(fields.get("rate.periodMillis")))));
            Object burst = fields.get("rate.burst");
            b.rateLimit(burst == null ? rate : rate.withBurst(Integer.parseInt(String.valueOf(burst))));
        }
        Object concurrency = fields.get("concurrency");
        if (concurrency != null) {
            b.concurrencyLimit(Integer.parseInt(String.valueOf(concurrency)));
        }
        return b.build();
    }

    @Override
    public void setQueueLimits(String queue, QueueLimits limits) {
        Objects.requireNonNull(limits, "limits must not be null");
        List<Object> args = new ArrayList<>();
        limits.rate().ifPresent(r -> args.addAll(List.of("rate.permits", Integer.toString(r.permits()),
                "rate.periodMillis", Long.toString(r.period().toMillis()), "rate.burst", Integer.toString(r.burst()))));
        limits.concurrency().ifPresent(c -> args.addAll(List.of("concurrency", Integer.toString(c))));
        RedisKeys k = redis.keys(queue);
        redis.callRetryingBrokenConnections("set the limits of " + queue, () ->
                redis.client().getScript(StringCodec.INSTANCE).evalAsync(k.queueLimits(), RScript.Mode.READ_WRITE,
                        LuaScripts.SET_QUEUE_LIMITS, RScript.ReturnType.LONG, List.of(k.queueLimits(), k.stream()), args.toArray()));
        // every job a rate limit pushed back is due now, under the new limits: in steps, however many wait
        String score = "0";
        String skip = "0";
        while (true) {
            String from = score;
            String skipped = skip;
            List<?> step = redis.callRetryingBrokenConnections("make the rate-limited jobs of " + queue + " due", () ->
                    redis.client().getScript(StringCodec.INSTANCE).<List<?>>evalAsync(k.delayed(), RScript.Mode.READ_WRITE,
                            LuaScripts.RESPACE_RATE_LIMITED, RScript.ReturnType.LIST, List.of(k.delayed()),
                            from, skipped, Integer.toString(respaceStep)));
            if (String.valueOf(step.get(0)).equals("1")) {
                return;
            }
            score = String.valueOf(step.get(1));
            skip = String.valueOf(step.get(2));
        }
    }
}
