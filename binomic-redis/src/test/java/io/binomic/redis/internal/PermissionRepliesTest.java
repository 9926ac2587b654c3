package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** ACL refusals become one line naming the user, what is missing and the fix; a script's SHA1 is mapped to its file. */
class PermissionRepliesTest {

    private static String sha1(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aScriptIsKnownByTheSha1RedisNamesItBy() throws Exception {
        assertEquals(Optional.of("stats.lua"), LuaSources.fileOf(sha1(LuaScripts.STATS)));
        assertEquals(Optional.of("enqueue_at_level.lua"), LuaSources.fileOf(sha1(LuaScripts.ENQUEUE_AT_LEVEL).toUpperCase()));
        assertEquals(Optional.empty(), LuaSources.fileOf("0".repeat(40)));
    }

    @Test
    void theCommandsOfAScriptIncludeThoseOfTheLibraryFunctionsItCalls() {
        LuaSources.script("stats.lua");
        assertEquals(Set.of("xinfo|groups", "xlen", "xrange", "xrevrange", "zcard"), LuaSources.commandsOf("stats.lua"));
        assertTrue(LuaSources.commandsOf("enqueue_at_level.lua").containsAll(Set.of("xgroup|create", "sadd", "xadd", "hset")),
                "level_stream of lib.lua creates the level's stream and group: " + LuaSources.commandsOf("enqueue_at_level.lua"));
    }

    @Test
    void aRefusedCommandIsNamedWithTheUserAndTheFix() {
        RuntimeException reply = new RuntimeException("NOPERM this user has no permissions to run the 'xadd' command."
                + " channel: [id: 0x1] command: (XADD), params: [binomic:{q}:stream, *, payload, {\"key\":1}]");
        assertTrue(PermissionReplies.isRefused(reply));
        BrokerException e = PermissionReplies.failure("127.0.0.1:6379", "producer", "enqueue on queue 'q'", reply);
        assertEquals("Redis at 127.0.0.1:6379 refused enqueue on queue 'q': ACL user 'producer' lacks command xadd (NOPERM):"
                + " run it as a user whose rule set has it (a reader's has no command that writes; a worker's has the operator's:"
                + " pause, limits, dead-letter replay and purge), or, if this user is meant to run it, grant it: ACL SETUSER producer"
                + " +xadd; " + PermissionReplies.RULE_SETS, e.getMessage());
    }

    @Test
    void aRefusalInsideAScriptNamesTheScriptAndItsCommands() throws Exception {
        String sha = sha1(LuaScripts.STATS);
        RuntimeException reply = new RuntimeException("ERR The user executing the script can't run this command or subcommand"
                + " script: " + sha + ", on @user_script:1.. channel: [id: 0x1] command: (EVALSHA), params: [" + sha + "]");
        String m = PermissionReplies.failure("r:1", "reader", "stats of 'q'", reply).getMessage();
        assertTrue(m.contains("ACL user 'reader' lacks a command that Lua script stats.lua (SHA1 " + sha + ") calls")
                && m.contains("ACL SETUSER reader +xinfo|groups +xlen +xrange +xrevrange +zcard;"), m);
        // a reader refused is told first to run it as another user: granting it would make the reader a writer
        assertTrue(m.contains("(NOPERM): run it as a user whose rule set has it (a reader's has no command that writes;"), m);
        assertFalse(m.contains("channel:"), m);
    }

    @Test
    void aRefusalInsideAScriptNamesTheCommandCalledOnTheLineRedisGives() throws Exception {
        String sha = sha1(LuaScripts.STATS);
        List<String> lines = LuaScripts.STATS.lines().toList();
        int line = 1 + IntStream.range(0, lines.size()).filter(i -> lines.get(i).contains("redis.call('XLEN'")).findFirst()
                .orElseThrow(() -> new AssertionError("stats.lua calls XLEN"));
        RuntimeException reply = new RuntimeException("ERR The user executing the script can't run this command or subcommand"
                + " script: " + sha + ", on @user_script:" + line + ".");
        String m = PermissionReplies.failure("r:1", "reader", "stats of 'q'", reply).getMessage();
        assertTrue(m.contains("ACL user 'reader' lacks command xlen (Lua script stats.lua calls it on line " + line + ") (NOPERM):")
                && m.contains("grant it: ACL SETUSER reader +xlen;"), m);
    }

    @Test
    void aKeyOutsideThePatternSaysWhichPatternToGrant() {
        RuntimeException reply = new RuntimeException("NOPERM this user has no permissions to access one of the keys used as arguments");
        String m = PermissionReplies.failure("r:1", "reader", "stats of 'q'", reply).getMessage();
        assertTrue(m.contains("lacks access to a key or channel of the command") && m.contains("~<keyPrefix>:* &<keyPrefix>:*"), m);
        assertFalse(PermissionReplies.isRefused(new RuntimeException("WRONGTYPE Operation against a key")));
    }
}
