package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What the module descriptors of the API and the core declare is what their code needs, as
 * {@code jdeps} sees it in the compiled classes: no dependency beyond the JDK and the API slips into
 * the core, and no declared dependency is unused. ModuleDescriptorTest (binomic-core) holds the
 * golden exports; this test holds the descriptors to the bytecode.
 */
class ModuleDependenciesTest {

    private static Path location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static String jdeps(String... args) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("jdeps not in this JDK"));
        StringWriter out = new StringWriter();
        int exit = jdeps.run(new PrintWriter(out), new PrintWriter(out), args);
        assertEquals(0, exit, out.toString());
        return out.toString();
    }

    /** The module names jdeps suggests requiring for {@code module}, without modifiers. */
    private static Set<String> suggestedRequires(String report, String module) {
        String section = report.substring(report.indexOf("[Suggested module descriptor for " + module + "]"));
        section = section.substring(section.indexOf('\n') + 1, section.indexOf("  [", 1));
        return section.lines().map(String::strip).filter(l -> l.startsWith("requires "))
                .map(l -> l.replace(";", "").split(" ")).map(words -> words[words.length - 1])
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Read from the built module itself: these tests run on the class path, where no module has a descriptor. */
    private static Set<String> declaredRequires(Class<?> type) throws URISyntaxException {
        ModuleDescriptor descriptor = java.lang.module.ModuleFinder.of(location(type)).findAll().iterator().next().descriptor();
        return descriptor.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void theApiAndTheCoreRequireExactlyWhatTheirClassesUse() throws Exception {
        String modulePath = location(Task.class) + java.io.File.pathSeparator + location(Binomic.class);
        String report = jdeps("--module-path", modulePath, "--check", "io.binomic.api,io.binomic.core");

        assertEquals(declaredRequires(Task.class), suggestedRequires(report, "io.binomic.api"), report);
        // jdk.unsupported is used reflectively (sun.misc.Signal, for a worker JVM's drain on SIGTERM), which jdeps does not see.
        Set<String> suggested = new TreeSet<>(suggestedRequires(report, "io.binomic.core"));
        suggested.add("jdk.unsupported");
        assertEquals(declaredRequires(Binomic.class), suggested, report);
        assertEquals(Set.of("java.base"), declaredRequires(Task.class), "the API needs nothing but java.base");
        assertEquals(Set.of("java.base", "io.binomic.api", "jdk.jfr", "jdk.httpserver", "java.logging", "java.management", "jdk.management",
                "jdk.unsupported"), declaredRequires(Binomic.class),
                "the core needs nothing outside the JDK and the API");
        assertFalse(report.contains("unused qualified exports"), report);
    }

    @Test
    void theCoreReachesNoNonJdkPackageOtherThanTheApi() throws Exception {
        String report = jdeps("--module-path", location(Task.class).toString(), "-summary", location(Binomic.class).toString());
        Set<String> targets = report.lines().filter(l -> l.contains(" -> ")).map(l -> l.substring(l.indexOf("->") + 2).strip())
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of("io.binomic.api", "java.base", "java.logging", "java.management", "jdk.httpserver", "jdk.jfr", "jdk.management"), targets, report);
    }
}
