package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.Task;
import java.lang.module.ModuleDescriptor;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The public surface: a change to exports, requires or provides must show up in review. */
class ModuleDescriptorTest {

    private static ModuleDescriptor descriptorOf(Class<?> type) {
        return type.getModule().getDescriptor();
    }

    @Test
    void apiExportsOnlyItsApiAndSpiPackagesAndRequiresOnlyTheJdk() {
        ModuleDescriptor api = descriptorOf(Task.class);
        assertEquals("io.binomic.api", api.name());
        assertEquals(Set.of("io.binomic.api", "io.binomic.api.spi"), api.exports().stream().filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet()));
        // Binding the TaskContext of a running handler is the core's business only.
        assertEquals(Set.of("io.binomic.api.internal to [io.binomic.core]"), api.exports().stream().filter(ModuleDescriptor.Exports::isQualified)
                .map(e -> e.source() + " to " + new TreeSet<>(e.targets())).collect(Collectors.toSet()));
        assertEquals(Set.of("java.base"), api.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet()));
    }

    @Test
    void coreExportsItsApiPackagesAndProvidesTheEmbeddedBrokerItsSchedulerAndTheCodec() {
        ModuleDescriptor core = descriptorOf(Binomic.class);
        assertEquals("io.binomic.core", core.name());
        assertEquals(Set.of("io.binomic.core", "io.binomic.core.testing"), core.exports().stream().filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet()));
        Set<String> requires = core.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(Set.of("java.base", "io.binomic.api", "jdk.jfr", "jdk.httpserver", "java.logging", "java.management", "jdk.management",
                "jdk.unsupported")), requires,
                "the core must need nothing outside the JDK and the API");
        Set<String> provides = core.provides().stream().map(p -> p.service() + " with " + p.providers())
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(Set.of(
                "io.binomic.api.spi.BrokerProvider with [io.binomic.core.internal.memory.MemoryBrokerProvider]",
                "io.binomic.api.spi.PayloadCodec with [io.binomic.core.internal.codec.JdkJsonCodec]",
                "io.binomic.api.spi.SchedulerProvider with [io.binomic.core.internal.memory.MemorySchedulerProvider]")), provides);
        assertEquals(new TreeSet<>(Set.of("io.binomic.api.spi.BrokerProvider", "io.binomic.api.spi.PayloadCodec",
                "io.binomic.api.spi.RunObserver", "io.binomic.api.spi.SchedulerProvider", "io.binomic.api.spi.TaskProvider",
                "io.binomic.api.spi.TraceContextProvider")),
                new TreeSet<>(core.uses()));
    }
}
