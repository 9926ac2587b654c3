package io.binomic.core.internal.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The worker JVM's options: the master's defaults ({@link MasterConfig#DEFAULT_WORKER_JVM_OPTIONS})
 * merged with the operator's. An operator's option takes over what it decides, and the defaults that
 * decide the same thing are left out (the JVM refuses two collectors, and of two values of one flag
 * the last silently wins):
 * <ul>
 *   <li>an option that chooses a collector ({@code -XX:+UseG1GC}, {@code -XX:+UseZGC}, ...) drops
 *       the default collector and the default heap sizing (its maximum included), which is tuned for
 *       that collector;</li>
 *   <li>an option that sizes the initial heap or the young generation ({@code -Xms}, {@code -Xmn},
 *       {@code -XX:InitialHeapSize=}, {@code -XX:MinHeapSize=}, {@code -XX:InitialRAMPercentage=},
 *       {@code -XX:NewSize=}, {@code -XX:MaxNewSize=}, {@code -XX:NewRatio=}) drops the default heap
 *       sizing, whose initial heap, young generation and maximum only make sense together;</li>
 *   <li>a maximum heap ({@code -Xmx}, {@code -XX:MaxHeapSize=}) replaces the default maximum and
 *       keeps the rest of the default heap sizing, unless it is less than twice the default initial
 *       heap: the fixed young generation would then leave too little of it to the old one. A maximum
 *       given as a share of the memory
 *       ({@code -XX:MaxRAM=}, {@code -XX:MaxRAMPercentage=}, {@code -XX:MinRAMPercentage=}) counts as
 *       the maximum the JVM derives from it ({@link #relativeMaximumHeap}): the same rule then holds,
 *       and a derived maximum under 80 MiB is not silently lifted to the default {@code -Xms80m}, as
 *       the JVM lifts a maximum it derives to an initial heap given on the command line;</li>
 *   <li>any other {@code -XX} flag, and {@code -Xss}, drops the default that sets the same flag.</li>
 * </ul>
 * The options of {@code JAVA_TOOL_OPTIONS} and {@code JDK_JAVA_OPTIONS}, which a worker inherits from
 * the master's environment, count as the operator's.
 */
final class JvmOptions {
    /** The environment variables the JVM and its launcher read options from; a worker inherits the master's. */
    static final List<String> ENVIRONMENT_VARIABLES = List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

    private static final String COLLECTOR = "collector";
    private static final String HEAP_SIZING = "heap sizing";
    private static final String MAXIMUM = "maximum heap";
    private static final Pattern CHOOSES_COLLECTOR =
            Pattern.compile("-XX:[+-]Use(Serial|Parallel|ParallelOld|G1|Z|Shenandoah|Epsilon|ConcMarkSweep)GC");
    private static final Pattern SIZES_HEAP = Pattern.compile("-Xm[sn].*"
            + "|-XX:(InitialHeapSize|MinHeapSize|InitialRAMPercentage|InitialRAMFraction|NewSize|MaxNewSize|NewRatio)=.*");
    private static final Pattern MAXIMUM_HEAP = Pattern.compile("(?:-Xmx|-XX:MaxHeapSize=)(\\d+)([kKmMgGtT]?)");
    private static final Pattern INITIAL_HEAP = Pattern.compile("-Xms(\\d+)([kKmMgGtT]?)");
    private static final Pattern MAXIMUM_RAM = Pattern.compile("-XX:MaxRAM=(\\d+)([kKmMgGtT]?)");
    private static final Pattern RAM_PERCENTAGE = Pattern.compile("-XX:(MaxRAMPercentage|MinRAMPercentage)=(\\d+(?:\\.\\d*)?)");
    /** The JVM's default of {@code MaxHeapSize} on 64-bit platforms, the floor of a maximum it derives from the memory. */
    static final long JVM_DEFAULT_MAXIMUM_HEAP = 126L << 20;
    private static final double JVM_DEFAULT_MAX_RAM_PERCENTAGE = 25;
    private static final double JVM_DEFAULT_MIN_RAM_PERCENTAGE = 50;
    private static final Pattern FLAG = Pattern.compile("-XX:[+-]?(\\w+)(=.*)?");

    private JvmOptions() { }

    /**
     * {@code defaults} less those that {@code configured} or {@code inherited} decide, then {@code configured}.
     * The inherited options are not repeated: the JVM reads them from its environment itself.
     * {@code physicalMemory} is the memory the workers' JVMs see, in bytes: what a
     * {@code -XX:MaxRAMPercentage=} is a share of.
     */
    static List<String> merge(List<String> defaults, List<String> configured, List<String> inherited, long physicalMemory) {
        Set<String> decided = new HashSet<>();
        long maximumHeap = Long.MAX_VALUE;
        // The JVM reads its environment's options first, so that the command line's win.
        for (String option : concat(inherited, configured)) {
            decided.addAll(decides(option));
            maximumHeap = Math.min(maximumHeap, bytes(MAXIMUM_HEAP.matcher(option)));
        }
        if (maximumHeap == Long.MAX_VALUE) {
            maximumHeap = relativeMaximumHeap(concat(inherited, configured), physicalMemory);
        }
        long initialHeap = defaults.stream().mapToLong(option -> bytes(INITIAL_HEAP.matcher(option))).min().orElse(Long.MAX_VALUE);
        if (decided.contains(COLLECTOR) || (initialHeap != Long.MAX_VALUE && maximumHeap < 2 * initialHeap)) {
            decided.add(HEAP_SIZING);
        }
        List<String> options = new ArrayList<>();
        for (String option : defaults) {
            Set<String> decides = decides(option);
            if (decides.contains(MAXIMUM)) {
                // The default maximum is sized for the default heap sizing: it goes with it.
                decides.add(HEAP_SIZING);
            }
            if (decides.stream().noneMatch(decided::contains)) {
                options.add(option);
            }
        }
        options.addAll(configured);
        return List.copyOf(options);
    }

    /**
     * The maximum heap the JVM derives when {@code options} (in the order it reads them) set no
     * {@code -Xmx} but the memory it assumes ({@code MaxRAM}) or the share of it ({@code MaxRAMPercentage},
     * or {@code MinRAMPercentage} for a memory under about 252 MiB); {@link Long#MAX_VALUE} when they set
     * none of these, as the JVM's own default maximum is then at least a quarter of the memory. This is
     * the JVM's rule ({@code Arguments::set_heap_size}): of a small memory it takes
     * {@code MinRAMPercentage}, of a larger one {@code MaxRAMPercentage} but never less than
     * {@link #JVM_DEFAULT_MAXIMUM_HEAP}.
     */
    static long relativeMaximumHeap(List<String> options, long physicalMemory) {
        long memory = physicalMemory;
        double maxPercentage = JVM_DEFAULT_MAX_RAM_PERCENTAGE;
        double minPercentage = JVM_DEFAULT_MIN_RAM_PERCENTAGE;
        boolean relative = false;
        for (String option : options) {
            long maximumRam = bytes(MAXIMUM_RAM.matcher(option));
            if (maximumRam != Long.MAX_VALUE) {
                memory = maximumRam;
                relative = true;
            }
            Matcher percentage = RAM_PERCENTAGE.matcher(option);
            if (percentage.matches()) {
                double value = Double.parseDouble(percentage.group(2));
                if (percentage.group(1).startsWith("Max")) {
                    maxPercentage = value;
                } else {
                    minPercentage = value;
                }
                relative = true;
            }
        }
        if (!relative) {
            return Long.MAX_VALUE;
        }
        long ofSmallMemory = (long) (memory * minPercentage / 100);
        if (ofSmallMemory < JVM_DEFAULT_MAXIMUM_HEAP) {
            return ofSmallMemory;
        }
        return Math.max((long) (memory * maxPercentage / 100), JVM_DEFAULT_MAXIMUM_HEAP);
    }

    /** The options the JVM reads from {@link #ENVIRONMENT_VARIABLES} of {@code environment}, split at white space. */
    static List<String> inherited(Map<String, String> environment) {
        List<String> options = new ArrayList<>();
        for (String variable : ENVIRONMENT_VARIABLES) {
            String value = environment.get(variable);
            if (value != null && !value.isBlank()) {
                options.addAll(List.of(value.strip().split("\\s+")));
            }
        }
        return options;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> both = new ArrayList<>(a);
        both.addAll(b);
        return both;
    }

    /** What {@code option} decides: the collector, the heap sizing, the maximum heap, or the flag it names. */
    private static Set<String> decides(String option) {
        Set<String> decides = new HashSet<>();
        if (CHOOSES_COLLECTOR.matcher(option).matches()) {
            decides.add(COLLECTOR);
        }
        if (SIZES_HEAP.matcher(option).matches()) {
            decides.add(HEAP_SIZING);
        }
        if (bytes(MAXIMUM_HEAP.matcher(option)) != Long.MAX_VALUE || MAXIMUM_RAM.matcher(option).matches()
                || RAM_PERCENTAGE.matcher(option).matches()) {
            decides.add(MAXIMUM);
        }
        if (option.startsWith("-Xss")) {
            decides.add("ThreadStackSize");
        }
        Matcher flag = FLAG.matcher(option);
        if (flag.matches()) {
            decides.add(flag.group(1));
        }
        return decides;
    }

    /** The size a matched {@code <digits><unit>} option gives, in bytes; {@link Long#MAX_VALUE} when it did not match. */
    private static long bytes(Matcher size) {
        if (!size.matches()) {
            return Long.MAX_VALUE;
        }
        int shift = switch (size.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        try {
            long value = Long.parseLong(size.group(1));
            return value > Long.MAX_VALUE >> shift ? Long.MAX_VALUE : value << shift;
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Why a JVM does not start with {@code options} (its own line), running {@code java <options> -version} once; empty when it starts. */
    static Optional<String> refusal(List<String> options) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-preview");
        // An option that makes the JVM write an AOT cache would make this -version run write one too.
        options.stream().filter(o -> !o.startsWith("-XX:AOTCacheOutput") && !o.startsWith("-XX:AOTConfiguration")
                && !o.startsWith("-XX:AOTMode")).forEach(command::add);
        command.add("-version");
        try {
            Process java = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!java.waitFor(30, TimeUnit.SECONDS)) {
                java.destroyForcibly();
                return Optional.empty(); // a slow machine is no reason to refuse: the workers' start timeout applies
            }
            return java.exitValue() == 0 ? Optional.empty()
                    : Optional.of(StartupFailureLine.reason(output.lines().toList()).orElse("exit code " + java.exitValue()));
        } catch (IOException e) {
            return Optional.empty(); // the same java starts the workers: their start reports what this could not run
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
