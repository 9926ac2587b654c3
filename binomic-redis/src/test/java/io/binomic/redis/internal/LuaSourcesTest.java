package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Priority;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The scripts are read from the module's resources, each after the library, its constants substituted. */
class LuaSourcesTest {
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{[A-Z_]+}}");

    private static List<String> everyScript() {
        return new ArrayList<>(LuaScripts.ALL);
    }

    @Test
    void everyScriptIsTheLibrarysHeadFollowedByWhatItUsesAndItsOwnFile() {
        List<String> scripts = everyScript();
        assertEquals(47, scripts.size());
        assertEquals(scripts.size(), new HashSet<>(scripts).size(), "each handle is a script of its own");
        for (String script : scripts) {
            assertTrue(script.startsWith(LuaSources.libraryHead()), script);
            assertTrue(script.length() > LuaSources.libraryHead().length(), "a script after the library's head");
            assertTrue(script.contains("redis.call") || script.contains("redis.pcall"), script);
            // every library function a script names (its own text or a function it carries) is defined before its own file
            for (String fn : LuaSources.functionsUsedBy(script)) {
                assertTrue(script.contains("local function " + fn + "("), fn + " is named but not defined in " + script);
            }
        }
    }

    @Test
    void aScriptCarriesOnlyTheLibraryFunctionsItNames() {
        // Redis runs the whole chunk on every call: each function defined is a closure made per call
        assertTrue(LuaScripts.SUBMIT_UNIQUE.contains("local function level_stream("), LuaScripts.SUBMIT_UNIQUE);
        assertFalse(LuaScripts.SUBMIT_UNIQUE.contains("local function lim_release_all("), LuaScripts.SUBMIT_UNIQUE);
        assertFalse(LuaScripts.SUBMIT_UNIQUE.contains("local function apply_job("), LuaScripts.SUBMIT_UNIQUE);
        assertTrue(LuaScripts.SUBMIT_UNIQUE.length() < LuaSources.library().length(), "less than the whole library");
        assertFalse(LuaScripts.ENQUEUE_UNIQUE.contains("local function "), "the common unique enqueue carries no function");
        // settle.lua names lim_release_all, which needs lim_promote, lim_move_now, add_member_to_stream and lim_turn (passed, not called)
        for (String fn : List.of("lim_release_all", "lim_chunked", "lim_promote", "lim_move_now", "add_member_to_stream", "lim_turn",
                "level_stream", "release_unique", "apply_job", "skip_job")) {
            assertTrue(LuaScripts.SETTLE.contains("local function " + fn + "("), fn);
        }
        assertFalse(LuaScripts.SETTLE.contains("local function release_unique_of_job("), LuaScripts.SETTLE);
    }

    @Test
    void theLibrarysConstantsAreTheJavaOnes() {
        String library = LuaSources.library();
        assertFalse(PLACEHOLDER.matcher(library).find(), library);
        assertTrue(library.contains("local DEFAULT_PRIORITY = " + Priority.DEFAULT + "\n"), library);
        assertTrue(library.contains("local GROUP = '" + RedisKeys.GROUP + "'\n"), library);
    }

    @Test
    void aMissingScriptFailsItsLoadByName() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> LuaSources.script("no_such_script.lua"));
        assertTrue(e.getMessage().contains("no_such_script.lua"), e.getMessage());
    }
}
