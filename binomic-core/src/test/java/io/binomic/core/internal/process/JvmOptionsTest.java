package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class JvmOptionsTest {
    private static final List<String> DEFAULTS = MasterConfig.DEFAULT_WORKER_JVM_OPTIONS;
    private static final long MEMORY = 16L << 30;
    private static final List<String> SERIAL_AND_HEAP_SIZING = List.of("-XX:+UseSerialGC", "-Xms80m", "-Xmn64m");

    private static List<String> merge(String... configured) {
        return JvmOptions.merge(DEFAULTS, List.of(configured), List.of(), MEMORY);
    }

    /** The defaults that are neither the collector nor the heap sizing. */
    private static List<String> others() {
        return DEFAULTS.stream().filter(o -> !SERIAL_AND_HEAP_SIZING.contains(o)).toList();
    }

    /** The defaults less the heap sizing. */
    private static List<String> withoutHeapSizing() {
        return DEFAULTS.stream().filter(o -> !o.startsWith("-Xms") && !o.startsWith("-Xmn")).toList();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return Stream.concat(a.stream(), b.stream()).toList();
    }

    @Test
    void theDefaultsChooseTheSerialCollectorAndTheHeapSizing() {
        assertEquals(SERIAL_AND_HEAP_SIZING, DEFAULTS.subList(0, 3));
        assertEquals(DEFAULTS, merge());
        MasterConfig config = MasterConfig.builder().brokerUrl("redis://localhost:6379").build();
        assertEquals(List.of("-XX:+UseSerialGC", "-Xms80m", "-Xmn64m", "-Xmx97m", "-XX:TrimNativeHeapInterval=10000"),
                config.workerJvmOptions(Map.of()));
        assertEquals(config.defaultWorkerJvmOptions(), config.workerJvmOptions(Map.of()));
    }

    @Test
    void theDefaultMaximumHeapIsTheYoungGenerationAndAnOldOneSizedFromTheConcurrency() {
        assertEquals("-Xmx97m", MasterConfig.defaultMaximumHeap(1));
        assertEquals("-Xmx97m", MasterConfig.defaultMaximumHeap(50));
        assertEquals("-Xmx105m", MasterConfig.defaultMaximumHeap(1_000));
        assertEquals("-Xmx975m", MasterConfig.defaultMaximumHeap(100_000), "100,000 sleeping tasks hold 350-420 MiB");
        assertEquals(List.of("-XX:+UseSerialGC", "-Xms80m", "-Xmn64m", "-Xmx105m", "-XX:TrimNativeHeapInterval=10000"),
                master(1_000).workerJvmOptions(Map.of()));
    }

    @Test
    void anOperatorsMaximumHeapReplacesTheDefaultMaximumAndKeepsTheRestOfTheHeapSizing() {
        assertEquals(concat(DEFAULTS, List.of("-Xmx512m")), master(50, "-Xmx512m").workerJvmOptions(Map.of()));
        assertEquals(concat(DEFAULTS, List.of("-XX:MaxHeapSize=1g")), master(50, "-XX:MaxHeapSize=1g").workerJvmOptions(Map.of()));
        assertEquals(concat(DEFAULTS, List.of("-XX:MaxRAMPercentage=10")),
                master(50, "-XX:MaxRAMPercentage=10").workerJvmOptions(Map.of()), "the JVM would take -Xmx over the share");
        assertEquals(DEFAULTS, master(50).workerJvmOptions(Map.of("JAVA_TOOL_OPTIONS", "-Xmx300m")), "inherited: not repeated");
        assertEquals(concat(withoutHeapSizing(), List.of("-Xmx128m")), master(50, "-Xmx128m").workerJvmOptions(Map.of()));
    }

    @Test
    void aCollectorOrAnInitialHeapOfTheOperatorDropsTheDefaultMaximumWithTheHeapSizing() {
        assertEquals(concat(others(), List.of("-XX:+UseG1GC")), master(50, "-XX:+UseG1GC").workerJvmOptions(Map.of()));
        assertEquals(concat(withoutHeapSizing(), List.of("-Xms256m")), master(50, "-Xms256m").workerJvmOptions(Map.of()),
                "-Xms256m over -Xmx97m: the JVM would refuse to start");
        assertEquals(concat(withoutHeapSizing(), List.of("-Xmn32m")), master(50, "-Xmn32m").workerJvmOptions(Map.of()));
    }

    private static MasterConfig master(int concurrency, String... jvmOptions) {
        return MasterConfig.builder().brokerUrl("redis://localhost:6379").concurrency(concurrency).jvmOptions(List.of(jvmOptions)).build();
    }

    @Test
    void optionsThatDecideNothingTheDefaultsDecideComeAfterTheDefaults() {
        assertEquals(concat(DEFAULTS, List.of("-Dapp.mode=x", "-Xlog:gc")), merge("-Dapp.mode=x", "-Xlog:gc"));
    }

    @Test
    void aCollectorOfTheOperatorReplacesTheDefaultCollectorAndHeapSizing() {
        assertEquals(concat(others(), List.of("-XX:+UseG1GC")), merge("-XX:+UseG1GC"));
        assertEquals(concat(others(), List.of("-XX:+UseZGC", "-Xmx1g")), merge("-XX:+UseZGC", "-Xmx1g"));
        assertEquals(concat(others(), List.of("-XX:+UseParallelGC")), merge("-XX:+UseParallelGC"));
        assertEquals(concat(others(), List.of("-XX:-UseSerialGC")), merge("-XX:-UseSerialGC"));
    }

    @Test
    void anInitialHeapOrYoungGenerationOfTheOperatorReplacesTheDefaultHeapSizing() {
        assertEquals(concat(withoutHeapSizing(), List.of("-Xms256m")), merge("-Xms256m"));
        assertEquals(concat(withoutHeapSizing(), List.of("-Xmn128m")), merge("-Xmn128m"), "-Xms80m under -Xmn128m: the JVM would warn");
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:InitialRAMPercentage=2")), merge("-XX:InitialRAMPercentage=2"));
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:InitialHeapSize=64m")), merge("-XX:InitialHeapSize=64m"));
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:NewRatio=3")), merge("-XX:NewRatio=3"));
    }

    @Test
    void aMaximumHeapKeepsTheDefaultsUnlessItIsLessThanTwiceTheDefaultInitialHeap() {
        assertEquals(concat(DEFAULTS, List.of("-Xmx512m")), merge("-Xmx512m"));
        assertEquals(concat(DEFAULTS, List.of("-Xmx160m")), merge("-Xmx160m"));
        assertEquals(concat(DEFAULTS, List.of("-XX:MaxRAMPercentage=10")), merge("-XX:MaxRAMPercentage=10"));
        assertEquals(concat(DEFAULTS, List.of("-Xmx1G")), merge("-Xmx1G"));
        assertEquals(concat(withoutHeapSizing(), List.of("-Xmx159m")), merge("-Xmx159m"), "64 MiB young of 159 MiB");
        assertEquals(concat(withoutHeapSizing(), List.of("-Xmx64m")), merge("-Xmx64m"), "-Xms80m over -Xmx64m: the JVM would refuse to start");
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:MaxHeapSize=67108864")), merge("-XX:MaxHeapSize=67108864"));
    }

    @Test
    void aMasterGivenMaxRamUnderTwiceTheDefaultInitialHeapLeavesOutTheDefaultHeapSizing() {
        MasterConfig config = MasterConfig.builder().brokerUrl("redis://localhost:6379").jvmOptions(List.of("-XX:MaxRAM=256m")).build();
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:MaxRAM=256m")), config.workerJvmOptions(Map.of()),
                "the JVM derives 126 MiB: 64 MiB young would leave 62 to the old generation");
    }

    @Test
    void aMaximumHeapAsAShareOfTheMemoryCountsAsTheMaximumTheJvmDerivesFromIt() {
        // Each figure is what -XX:+PrintFlagsFinal shows as MaxHeapSize for the option alone.
        assertEquals(100L << 20, JvmOptions.relativeMaximumHeap(List.of("-XX:MaxRAM=200m"), MEMORY), "half of a small memory");
        assertEquals(126L << 20, JvmOptions.relativeMaximumHeap(List.of("-XX:MaxRAM=256m"), MEMORY), "the JVM's default maximum as floor");
        assertEquals(256L << 20, JvmOptions.relativeMaximumHeap(List.of("-XX:MaxRAM=1g", "-XX:MaxRAMPercentage=25"), MEMORY));
        assertEquals((long) (8 * MEMORY * 0.5 / 100), JvmOptions.relativeMaximumHeap(List.of("-XX:MaxRAMPercentage=0.5"), 8 * MEMORY));
        assertEquals(Long.MAX_VALUE, JvmOptions.relativeMaximumHeap(List.of("-Xlog:gc", "-XX:InitialRAMPercentage=5"), MEMORY));

        // -Xms80m would raise these maxima to 80 MiB and leave 16 MiB to the old generation, or none.
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:MaxRAM=256m")), merge("-XX:MaxRAM=256m"));
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:MaxRAMPercentage=0.5")), merge("-XX:MaxRAMPercentage=0.5"));
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:MaxRAM=4g", "-XX:MaxRAMPercentage=3")),
                merge("-XX:MaxRAM=4g", "-XX:MaxRAMPercentage=3"), "122.9 MiB, under the JVM's floor: 126 MiB");
        assertEquals(concat(DEFAULTS, List.of("-XX:MaxRAM=1g")), merge("-XX:MaxRAM=1g"), "a quarter of 1 GiB: 256 MiB");
        assertEquals(concat(DEFAULTS, List.of("-XX:MaxRAMPercentage=1")), merge("-XX:MaxRAMPercentage=1"), "164 MiB of 16 GiB");
        assertEquals(concat(withoutHeapSizing(), List.of("-XX:MaxRAMPercentage=1")),
                JvmOptions.merge(DEFAULTS, List.of("-XX:MaxRAMPercentage=1"), List.of(), 8L << 30), "82 MiB of 8 GiB, 126 MiB floor");
        assertEquals(withoutHeapSizing(), JvmOptions.merge(DEFAULTS, List.of(), List.of("-XX:MaxRAM=256m"), MEMORY), "inherited");
        assertEquals(concat(DEFAULTS, List.of("-XX:MaxRAM=256m", "-Xmx1g")), merge("-XX:MaxRAM=256m", "-Xmx1g"), "-Xmx wins");
    }

    @Test
    void aFlagOfTheOperatorReplacesTheDefaultOfTheSameFlag() {
        List<String> without = DEFAULTS.stream().filter(o -> !o.startsWith("-XX:TrimNativeHeapInterval")).toList();
        assertEquals(concat(without, List.of("-XX:TrimNativeHeapInterval=0")), merge("-XX:TrimNativeHeapInterval=0"));
        assertEquals(List.of("-Xss512k"), JvmOptions.merge(List.of("-XX:ThreadStackSize=256"), List.of("-Xss512k"), List.of(), MEMORY));
    }

    @Test
    void optionsTheWorkersInheritFromTheEnvironmentCountAsTheOperatorsButAreNotRepeated() {
        Map<String, String> environment = Map.of("JAVA_TOOL_OPTIONS", " -XX:+UseG1GC  -Dx=y ", "JDK_JAVA_OPTIONS", "-Xms64m",
                "PATH", "-XX:+UseZGC");
        assertEquals(List.of("-XX:+UseG1GC", "-Dx=y", "-Xms64m"), JvmOptions.inherited(environment));
        MasterConfig config = MasterConfig.builder().brokerUrl("redis://localhost:6379").jvmOptions(List.of("-Dapp=1")).build();
        assertEquals(concat(others(), List.of("-Dapp=1")), config.workerJvmOptions(environment));
        assertEquals(concat(config.defaultWorkerJvmOptions(), List.of("-Dapp=1")), config.workerJvmOptions(Map.of("JAVA_TOOL_OPTIONS", "")));
    }
}
