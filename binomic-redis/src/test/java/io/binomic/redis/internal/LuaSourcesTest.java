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
    void everyScriptIsTheLibraryFollowedByItsOwnFile() {
        List<String> scripts = everyScript();
        assertEquals(30, scripts.size());
        assertEquals(scripts.size(), new HashSet<>(scripts).size(), "each handle is a script of its own");
        for (String script : scripts) {
            assertTrue(script.startsWith(LuaSources.library()), script);
            assertTrue(script.length() > LuaSources.library().length(), "a script after the library");
            assertTrue(script.contains("redis.call") || script.contains("redis.pcall"), script);
        }
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
