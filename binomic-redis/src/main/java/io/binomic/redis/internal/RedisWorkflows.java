package io.binomic.redis.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.Workflows;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Workflows. On one Redis node a workflow is one hash under its own hash tag
 * ({@code <prefix>:workflow:{<id>}}, described in {@code lib.lua}), created with its jobs' records
 * and its roots enqueued by {@code submit_workflow.lua}, and changed by the settle script
 * ({@code settle.lua}, {@code wf_settled} in {@code lib.lua}) in the same step as each job's final
 * settlement, which also enqueues the jobs it releases: those scripts reach keys of several hash
 * tags. On a Cluster ({@code cluster} not null) the same hash lives in the flows' slot, and each step
 * keeps to one slot ({@link ClusterWorkflows}).
 */
final class RedisWorkflows implements Workflows {
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() { };

    private final RedisContext redis;
    private final ClusterWorkflows cluster;

    RedisWorkflows(RedisContext redis, ClusterWorkflows cluster) {
        this.redis = redis;
        this.cluster = cluster;
    }

    private String keyOf(UUID id) { return cluster == null ? workflowKey(prefix(), id) : cluster.workflowKey(id); }

    static String workflowKey(String prefix, UUID id) { return prefix + ":workflow:{" + id + "}"; }

    private String prefix() { return redis.config.keyPrefix(); }

    @Override
    public void submitWorkflow(NewWorkflow workflow) {
        Map<String, List<String>> dependents = new HashMap<>();
        for (NewWorkflow.Node n : workflow.nodes()) {
            Message m = n.job();
            if (!workflow.id().equals(m.workflow()) || !m.isTracked()) {
                throw new IllegalArgumentException("message " + m.id() + " is not a tracked job of workflow " + workflow.id());
            }
            for (String d : n.dependsOn()) {
                if (!dependents.containsKey(d)) {
                    throw new IllegalArgumentException("node '" + n.name() + "' depends on '" + d + "', not a node before it");
                }
                dependents.get(d).add(n.name());
            }
            dependents.put(n.name(), new ArrayList<>());
        }
        List<Object> head = List.of(Long.toString(workflow.retention().toMillis()), Long.toString(System.currentTimeMillis()));
        List<List<Object>> nodeArgs = new ArrayList<>();
        List<Message> jobs = new ArrayList<>();
        for (NewWorkflow.Node n : workflow.nodes()) {
            Message m = n.job();
            redis.checkSize(m);
            jobs.add(m);
            nodeArgs.add(List.of(n.name(), m.id().toString(), m.queue(), m.task(), m.trackForMillis(), json(n.dependsOn()),
                    json(n.ignoringFailureOf()), json(dependents.get(n.name())), StreamFields.toJson(StreamFields.encode(m)),
                    Long.toString(n.delay().toMillis())));
        }
        // Once: sent again, it would find the workflow it created and fail, or run after its caller was told it failed.
        UUID id = workflow.id();
        WriteOnce.Effect effect = WriteOnce.Effect.create("workflow id " + id, "a workflow submitted again is a second workflow,"
                + " with a new id, whose jobs run besides this one's; binomic.workflow(" + id + ").status() finds this one if it was"
                + " created");
        if (cluster != null) {
            cluster.submit("submit workflow " + id, effect, id, head, nodeArgs, jobs);
            return;
        }
        List<Object> keys = new ArrayList<>(1 + 3 * jobs.size());
        keys.add(workflowKey(prefix(), id));
        for (Message m : jobs) {
            RedisKeys k = redis.keys(m.queue());
            keys.add(k.stream());
            keys.add(k.job(m.id()));
            keys.add(k.delayed());
        }
        List<Object> args = new ArrayList<>(head);
        nodeArgs.forEach(args::addAll);
        redis.writeOnce.sendScript("submit workflow " + id, effect, LuaScripts.SUBMIT_WORKFLOW, RScript.ReturnType.LONG, keys,
                args.toArray());
    }

    @Override
    public Map<UUID, String> cancelWorkflow(UUID id) {
        List<?> reply = cluster != null ? cluster.cancel(id) : redis.call("cancel workflow " + id, () -> redis.client()
                .getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, LuaScripts.CANCEL_WORKFLOW, RScript.ReturnType.LIST,
                        List.of(workflowKey(prefix(), id))));
        Map<UUID, String> enqueued = new LinkedHashMap<>();
        if (reply != null) {
            for (int i = 1; i + 1 < reply.size(); i += 2) {
                enqueued.put(UUID.fromString(ScriptReplies.replyText(reply.get(i))), ScriptReplies.replyText(reply.get(i + 1)));
            }
        }
        return enqueued;
    }

    @Override
    public Optional<WorkflowStatus> readWorkflow(UUID id) {
        Map<String, String> w = redis.call("read workflow " + id, () -> redis.client()
                .<String, String>getMap(keyOf(id), StringCodec.INSTANCE).readAllMap());
        if (w == null || w.isEmpty() || !w.containsKey("names")) {
            return Optional.empty();
        }
        List<WorkflowStatus.Node> nodes = new ArrayList<>();
        for (String name : strings(w.get("names"))) {
            nodes.add(new WorkflowStatus.Node(name, UUID.fromString(w.get("j:" + name)), w.get("q:" + name), w.get("t:" + name),
                    state(w.get("s:" + name)), strings(w.get("d:" + name)), Set.copyOf(strings(w.get("o:" + name)))));
        }
        return Optional.of(new WorkflowStatus(id, "1".equals(w.get("cancelRequested")),
                Instant.ofEpochMilli(Long.parseLong(w.getOrDefault("createdAt", "0"))), nodes));
    }

    @Override
    public FlowCounts counts() {
        return cluster == null ? RedisBatches.readCounts(redis, "workflow") : RedisBatches.readCounts(redis, cluster.countsKey(), "workflow");
    }

    private static NodeState state(String letter) {
        return switch (letter == null ? "" : letter) {
            case "W" -> NodeState.WAITING;
            case "E" -> NodeState.ENQUEUED;
            case "S" -> NodeState.SUCCEEDED;
            case "D" -> NodeState.DEAD_LETTERED;
            case "C" -> NodeState.CANCELLED;
            case "K" -> NodeState.SKIPPED;
            default -> throw new IllegalStateException("a workflow node in state '" + letter + "', which this version does not know");
        };
    }

    private static String json(Collection<String> names) {
        try {
            return JSON.writeValueAsString(names);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a list of strings as JSON", e); // cannot happen
        }
    }

    private static List<String> strings(String json) {
        try {
            return json == null ? List.of() : JSON.readValue(json, STRINGS);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a workflow record holds malformed JSON: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * Adds the workflow bookkeeping of a settlement of job {@code m} of a workflow to the settle
     * script's arguments ('W', index of the workflow's key, job id, outcome letter); nothing for a retry.
     */
    static void addSettleArguments(Settlement s, Message m, String prefix, List<Object> keys, List<Object> args) {
        Batches.Outcome outcome = Batches.outcomeOf(s);
        if (outcome == null) {
            return;
        }
        keys.add(workflowKey(prefix, m.workflow()));
        args.add("W");
        args.add(Integer.toString(keys.size()));
        args.add(m.id().toString());
        args.add(switch (outcome) {
            case SUCCEEDED -> "S";
            case DEAD_LETTERED -> "D";
            case CANCELLED -> "C";
        });
    }
}
