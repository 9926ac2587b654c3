package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The Jackson codec as applications get it: found by ServiceLoader, used when BinomicConfig.payloadCodec names it. */
class JacksonPayloadCodecIT {
    private final PayloadCodec codec = ServiceLoader.load(PayloadCodec.class).stream().map(ServiceLoader.Provider::get)
            .filter(c -> c.id().equals("jackson")).findFirst().orElseThrow();

    record Order(String id, int quantity, Instant placedAt, LocalDate due, Duration window, List<String> tags) { }

    record Small(String id) { }

    private static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void recordsWithJavaTimeValuesRoundTrip() {
        Order order = new Order("o-1", 3, Instant.parse("2026-11-30T04:00:00.123Z"), LocalDate.of(2026, 12, 24),
                Duration.ofMinutes(90), List.of("a", "b"));

        byte[] bytes = codec.encode(order);

        assertTrue(new String(bytes, StandardCharsets.UTF_8).contains("\"placedAt\":\"2026-11-30T04:00:00.123Z\""),
                "java.time is written as ISO text: " + new String(bytes, StandardCharsets.UTF_8));
        assertEquals(order, codec.decode(bytes, Order.class));
    }

    @Test
    void unknownPropertiesFromAnotherProducersRecordAreRefusedNamingTheProperty() {
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"id\":\"x\",\"addedLater\":42}"), Small.class));
        assertTrue(e.getMessage().startsWith("$.addedLater: Unrecognized field \"addedLater\""), e.getMessage());
    }

    @Test
    void aClassNameInThePayloadNeverChoosesWhatIsInstantiated() {
        Object decoded = codec.decode(json("{\"@class\":\"java.net.URL\",\"protocol\":\"http\",\"host\":\"evil\"}"), Object.class);
        assertInstanceOf(Map.class, decoded, "decoded into plain JSON data, not a java.net.URL");
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"@class\":\"java.lang.ProcessBuilder\",\"id\":\"x\"}"), Small.class));
        assertTrue(e.getMessage().startsWith("$[\"@class\"]: "), e.getMessage());
    }

    @Test
    void nullEncodesForTasksWithoutArgument() {
        assertEquals("null", new String(codec.encode(null), StandardCharsets.UTF_8));
    }

    @Test
    void undecodablePayloadIsAPayloadDecodeExceptionNamingTheType() {
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"id\": [1, 2"), Small.class));
        assertTrue(e.getMessage().startsWith("$"), e.getMessage());
        assertTrue(e.getMessage().contains("(decoding the payload into " + Small.class.getName() + ")"), e.getMessage());

        PayloadDecodeException wrongType = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"id\":\"o\",\"quantity\":\"many\"}"), Order.class));
        assertTrue(wrongType.getMessage().startsWith("$.quantity: "), wrongType.getMessage());
    }

    @Test
    void recordInAPackageNotOpenedToJacksonFailsWithTheOpensLineToAdd() throws Exception {
        Class<?> type = classInANamedModule("example.app", "example.app.tasks", "public record Refund(String id, int cents) { }",
                "Refund");

        PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"id\":\"r-1\",\"cents\":250}"), type));

        assertTrue(e.getMessage().endsWith("; Jackson cannot access example.app.tasks.Refund: add"
                + " 'opens example.app.tasks to com.fasterxml.jackson.databind;' to module-info.java of module example.app"),
                e.getMessage());
    }

    /** Compiles a one-class module (its package neither exported nor opened) and loads it in a new layer. */
    private static Class<?> classInANamedModule(String module, String pkg, String body, String simpleName) throws Exception {
        java.nio.file.Path src = java.nio.file.Files.createTempDirectory("binomic-module-src");
        java.nio.file.Path out = java.nio.file.Files.createTempDirectory("binomic-module-out");
        java.nio.file.Path pkgDir = java.nio.file.Files.createDirectories(src.resolve(pkg.replace('.', '/')));
        java.nio.file.Files.writeString(src.resolve("module-info.java"), "module " + module + " { }");
        java.nio.file.Files.writeString(pkgDir.resolve(simpleName + ".java"), "package " + pkg + "; " + body);
        int rc = javax.tools.ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d", out.toString(),
                src.resolve("module-info.java").toString(), pkgDir.resolve(simpleName + ".java").toString());
        assertEquals(0, rc, "javac failed");
        ModuleLayer boot = ModuleLayer.boot();
        java.lang.module.Configuration cf = boot.configuration().resolve(java.lang.module.ModuleFinder.of(out),
                java.lang.module.ModuleFinder.of(), java.util.Set.of(module));
        ModuleLayer layer = boot.defineModulesWithOneLoader(cf, ClassLoader.getSystemClassLoader());
        return layer.findLoader(module).loadClass(pkg + "." + simpleName);
    }
}
