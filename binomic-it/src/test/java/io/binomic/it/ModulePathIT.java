package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** binomic-redis as a JPMS module: its descriptor, and a real run with everything on the module path. */
class ModulePathIT {

    /** Runtime jars of binomic-redis (and the API), by file name prefix. */
    private static final List<String> MODULE_PATH_PREFIXES = List.of("binomic-api", "binomic-redis", "redisson", "netty-",
            "reactor-core", "reactive-streams", "rxjava", "kryo", "reflectasm", "objenesis", "minlog", "slf4j-api",
            "snakeyaml", "byte-buddy", "jodd-util", "cache-api", "jackson-", "jspecify");

    private static List<Path> classPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator)).map(Path::of).toList();
    }

    /** A reactor build may hand us target/classes instead of the jar: name it after its project then. */
    private static String artifactName(Path entry) {
        return Files.isDirectory(entry) && entry.endsWith(Path.of("target", "classes"))
                ? entry.getParent().getParent().getFileName().toString() : entry.getFileName().toString();
    }

    private static Path binomicRedis() {
        return classPath().stream().filter(p -> artifactName(p).startsWith("binomic-redis")).findFirst().orElseThrow();
    }

    @Test
    void descriptorExportsNothingAndProvidesTheBrokerItsSchedulerAndTheCodec() {
        ModuleDescriptor descriptor = ModuleFinder.of(binomicRedis()).find("io.binomic.redis").orElseThrow().descriptor();

        assertEquals(Set.of(), descriptor.exports());
        assertEquals(Set.of(), descriptor.opens());
        assertEquals(Set.of("io.binomic.api.spi.BrokerProvider -> [io.binomic.redis.internal.RedisBrokerProvider]",
                        "io.binomic.api.spi.PayloadCodec -> [io.binomic.redis.internal.JacksonPayloadCodec]",
                        "io.binomic.api.spi.SchedulerProvider -> [io.binomic.redis.internal.RedisSchedulerProvider]"),
                descriptor.provides().stream().map(p -> p.service() + " -> " + p.providers()).collect(Collectors.toSet()));
        assertTrue(descriptor.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet())
                .containsAll(Set.of("io.binomic.api", "redisson", "com.fasterxml.jackson.databind")));
        // Redisson, an automatic module, brings no explicit module into the graph: this module requires those it uses.
        assertTrue(descriptor.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet())
                .containsAll(Set.of("io.netty.resolver.dns", "io.netty.handler", "io.netty.transport", "org.slf4j")), descriptor.toString());
    }

    private static List<Path> modulePath(List<String> prefixes) {
        return classPath().stream()
                .filter(p -> prefixes.stream().anyMatch(prefix -> artifactName(p).startsWith(prefix)))
                .filter(p -> !artifactName(p).endsWith("-tests.jar")).toList();
    }

    /**
     * The CLI as the README runs it from the jars, by the module's name (its main class, not a class of a package it does not
     * export), without {@code --add-modules}: the broker module is found by its service alone.
     */
    @Test
    void theCliRunsOnRedisFromTheModulePathWithoutAddModules() throws Exception {
        List<String> prefixes = new ArrayList<>(MODULE_PATH_PREFIXES);
        prefixes.add("binomic-core");
        Path log = Files.createTempFile("binomic-modulepath-cli-", ".log");
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modulePath(prefixes).stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
                "-m", "io.binomic.core",
                "queues", "--queues", "modulepath-cli", "--broker", RedisServer.shared().url());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();

        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "module-path JVM did not finish");
        String output = Files.readString(log);
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.contains("QUEUE") && output.contains("modulepath-cli"), output);
    }

    @Test
    void brokerAndCodecWorkWithEverythingOnTheModulePath() throws Exception {
        List<Path> modules = modulePath(MODULE_PATH_PREFIXES);
        Path testClasses = classPath().stream().filter(p -> p.endsWith(Path.of("target", "test-classes"))).findFirst().orElseThrow();
        Path log = Files.createTempFile("binomic-modulepath-", ".log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modules.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
                // This smoke's main class is on the class path, which roots no module of the module path.
                "--add-modules", "ALL-MODULE-PATH",
                "-cp", testClasses.toString(), ModulePathSmoke.class.getName(), RedisServer.shared().url()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();

        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "module-path JVM did not finish");
        String output = Files.readString(log);
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.contains("MODULE PATH OK provider-module=io.binomic.redis codec-module=io.binomic.redis"
                + " scheduler-module=io.binomic.redis payload={k=v}"),
                output);
    }
}
