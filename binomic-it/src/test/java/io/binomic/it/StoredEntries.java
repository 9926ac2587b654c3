package io.binomic.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The keys of a Redis written by one version of Binomic, as JSON lines that a test can put into a
 * fresh Redis, so that a newer version is proven to read what users already have in theirs. The
 * format is readable in review: one key a line with its type, its remaining time to live and its
 * content (a stream's entries with their ids and its consumer groups with their last delivered id).
 */
final class StoredEntries {
    private static final ObjectMapper JSON = new ObjectMapper();

    private StoredEntries() { }

    /** Writes every {@code binomic:*} key of {@code redis}, one JSON object a line, sorted by key. */
    static void dump(RedisServer redis, Writer out) throws IOException {
        List<String> keys = new ArrayList<>();
        String cursor = "0";
        do {
            List<?> reply = (List<?>) redis.call("SCAN", cursor, "MATCH", "binomic:*", "COUNT", "1000");
            cursor = (String) reply.get(0);
            for (Object key : (List<?>) reply.get(1)) {
                keys.add((String) key);
            }
        } while (!cursor.equals("0"));
        keys.sort(null);
        for (String key : keys) {
            ObjectNode described = describe(redis, key);
            if (described != null) {
                out.write(JSON.writeValueAsString(described));
                out.write('\n');
            }
        }
    }

    /** The key as a JSON object; null when it expired since it was listed. */
    private static ObjectNode describe(RedisServer redis, String key) {
        String type = (String) redis.call("TYPE", key);
        if (type.equals("none")) {
            return null;
        }
        ObjectNode node = JSON.createObjectNode().put("key", key).put("type", type).put("pttl", (Long) redis.call("PTTL", key));
        switch (type) {
            case "string" -> node.put("value", (String) redis.call("GET", key));
            case "hash" -> node.set("fields", pairs((List<?>) redis.call("HGETALL", key)));
            case "set" -> {
                ArrayNode members = node.putArray("members");
                ((List<?>) redis.call("SMEMBERS", key)).stream().map(String.class::cast).sorted().forEach(members::add);
            }
            case "zset" -> {
                ArrayNode members = node.putArray("members");
                List<?> reply = (List<?>) redis.call("ZRANGE", key, "0", "-1", "WITHSCORES");
                for (int i = 0; i < reply.size(); i += 2) {
                    members.addObject().put("member", (String) reply.get(i)).put("score", (String) reply.get(i + 1));
                }
            }
            case "stream" -> {
                ArrayNode entries = node.putArray("entries");
                for (Object entry : (List<?>) redis.call("XRANGE", key, "-", "+")) {
                    List<?> idAndFields = (List<?>) entry;
                    entries.addObject().put("id", (String) idAndFields.get(0)).set("fields", pairs((List<?>) idAndFields.get(1)));
                }
                ArrayNode groups = node.putArray("groups");
                for (Object group : (List<?>) redis.call("XINFO", "GROUPS", key)) {
                    ObjectNode info = pairs((List<?>) group);
                    groups.addObject().put("name", info.get("name").asText()).put("lastDeliveredId", info.get("last-delivered-id").asText())
                            .put("pending", info.get("pending").asLong());
                }
            }
            default -> throw new IllegalStateException("key " + key + " has type " + type + ", which StoredEntries does not store");
        }
        return node;
    }

    /** A flat RESP reply of names and values as an object; a nested reply is written as its text. */
    private static ObjectNode pairs(List<?> flat) {
        ObjectNode node = JSON.createObjectNode();
        for (int i = 0; i < flat.size(); i += 2) {
            node.put((String) flat.get(i), String.valueOf(flat.get(i + 1)));
        }
        return node;
    }

    /**
     * Puts the keys of resource {@code name} into {@code redis}, with their remaining time to live;
     * a stream gets its entries under their own ids and its groups at their last delivered id.
     */
    static List<JsonNode> restore(RedisServer redis, String name) {
        List<JsonNode> keys = read(name);
        for (JsonNode key : keys) {
            String k = key.get("key").asText();
            switch (key.get("type").asText()) {
                case "string" -> check(redis.call("SET", k, key.get("value").asText()));
                case "hash" -> key.get("fields").properties().forEach(f -> check(redis.call("HSET", k, f.getKey(), f.getValue().asText())));
                case "set" -> key.get("members").forEach(m -> check(redis.call("SADD", k, m.asText())));
                case "zset" -> key.get("members").forEach(m -> check(redis.call("ZADD", k, m.get("score").asText(), m.get("member").asText())));
                case "stream" -> {
                    for (JsonNode entry : key.get("entries")) {
                        List<String> args = new ArrayList<>(List.of("XADD", k, entry.get("id").asText()));
                        entry.get("fields").properties().forEach(f -> {
                            args.add(f.getKey());
                            args.add(f.getValue().asText());
                        });
                        check(redis.call(args.toArray(String[]::new)));
                    }
                    for (JsonNode group : key.get("groups")) {
                        check(redis.call("XGROUP", "CREATE", k, group.get("name").asText(), group.get("lastDeliveredId").asText(), "MKSTREAM"));
                    }
                }
                default -> throw new IllegalStateException("resource " + name + ": key " + k + " has an unknown type");
            }
            long pttl = key.get("pttl").asLong();
            if (pttl > 0) {
                check(redis.call("PEXPIRE", k, Long.toString(pttl)));
            }
        }
        return keys;
    }

    private static List<JsonNode> read(String name) {
        try (InputStream in = Objects.requireNonNull(StoredEntries.class.getResourceAsStream(name), "no resource " + name);
             BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            List<JsonNode> keys = new ArrayList<>();
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (!line.isBlank()) {
                    keys.add(JSON.readTree(line));
                }
            }
            return keys;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void check(Object reply) {
        if (reply instanceof Resp.Error error) {
            throw new IllegalStateException("Redis refused a stored entry: " + error.message());
        }
    }
}
