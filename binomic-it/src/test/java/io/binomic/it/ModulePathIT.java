package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
        return java.util.Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator)).map(Path::of).toList();
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
    }

    @Test
    void brokerAndCodecWorkWithEverythingOnTheModulePath() throws Exception {
        List<Path> modules = classPath().stream()
                .filter(p -> MODULE_PATH_PREFIXES.stream().anyMatch(prefix -> artifactName(p).startsWith(prefix)))
                .filter(p -> !artifactName(p).endsWith("-tests.jar")).toList();
        Path testClasses = classPath().stream().filter(p -> p.endsWith(Path.of("target", "test-classes"))).findFirst().orElseThrow();
        Path log = Files.createTempFile("binomic-modulepath-", ".log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modules.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
                // Redisson is an automatic module and reads only what something requires (TOOLCHAIN.md).
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
