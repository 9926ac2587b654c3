package io.binomic.core.internal.process;

import java.io.File;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The JDK ahead-of-time cache (JEP 483/514/515) the master gives its worker JVMs: classes loaded
 * and linked, and method profiles, from a training run of a worker, so a fresh worker reaches
 * RUNNING sooner and compiles its hot paths earlier.
 *
 * <p>The cache is {@code <java.home>/lib/binomic-worker.aot} (where {@code build-runtime.sh}
 * trains it in the jlink image), or the file named by the system property
 * {@value #PROPERTY} of the master ({@code none} turns it off). No file: nothing is added.
 *
 * <p>The JVM accepts a cache only for the module path it was trained with; on any other it prints
 * errors on every start and runs without it. The training script writes that module path next to
 * the cache ({@code binomic-worker.aot.modulepath}), so the master passes the cache only to workers
 * with the same module path, none of whose jars (or directories of jars) changed after the cache
 * was written, and says once, in its own log, how to retrain it for theirs. A cache the JVM rejects
 * for another reason (another JDK) costs a warning in the worker's log, never its start:
 * {@code -XX:AOTMode} stays at its default, {@code auto}.
 */
final class AotCache {
    private static final System.Logger LOG = System.getLogger(AotCache.class.getName());
    /** System property naming the cache file; {@code none} for no cache. */
    static final String PROPERTY = "binomic.worker.aotCache";
    static final String FILE_NAME = "binomic-worker.aot";
    static final String MODULE_PATH_SUFFIX = ".modulepath";

    private AotCache() { }

    /**
     * The worker's JVM options: {@code jvmOptions} with {@code -XX:AOTCache=<file>} first when a cache
     * applies; {@code jvmOptions} unchanged when there is none, when it was trained for another module
     * path, or when the options already choose what the JVM shares (an own cache, a training run,
     * {@code -Xshare}).
     */
    static List<String> workerOptions(List<String> jvmOptions) {
        Optional<Path> cache = usableCache(jvmOptions, System.getProperty(PROPERTY),
                Path.of(System.getProperty("java.home")), System.getProperty("jdk.module.path"));
        return cache.map(file -> Stream.concat(Stream.of("-XX:AOTCache=" + file), jvmOptions.stream()).toList()).orElse(jvmOptions);
    }

    /** The cache to pass, given the master's settings; logs why a cache that is there is not used. */
    static Optional<Path> usableCache(List<String> jvmOptions, String property, Path javaHome, String modulePath) {
        if ("none".equals(property)) {
            return Optional.empty();
        }
        for (String option : jvmOptions) {
            if (option.startsWith("-XX:AOT") || option.startsWith("-Xshare") || option.startsWith("-XX:SharedArchiveFile")) {
                return Optional.empty(); // the operator's own choice (or a training run) wins
            }
        }
        Path cache = property == null || property.isBlank() ? javaHome.resolve("lib").resolve(FILE_NAME) : Path.of(property);
        if (!Files.isRegularFile(cache)) {
            if (property != null && !property.isBlank()) {
                LOG.log(Level.WARNING, "no AOT cache at {0} (system property {1}): worker JVMs start without one", cache, PROPERTY);
            }
            return Optional.empty();
        }
        Path trainedFile = cache.resolveSibling(cache.getFileName() + MODULE_PATH_SUFFIX);
        if (Files.isRegularFile(trainedFile)) {
            String trained = read(trainedFile);
            if (trained == null || !entries(trained).equals(entries(modulePath))) {
                LOG.log(Level.INFO, "AOT cache {0} was trained for module path {1}, the workers have {2}: they start without it; "
                        + "retrain it with bin/binomic-train-aot (same BINOMIC_MODULE_PATH)", cache, trained, modulePath);
                return Optional.empty();
            }
        }
        Optional<Path> changed = changedSince(cache, entries(modulePath));
        if (changed.isPresent()) {
            LOG.log(Level.INFO, "AOT cache {0} is older than {1} on the workers'' module path (a jar added, removed or replaced"
                    + " since it was trained): they start without it; retrain it with bin/binomic-train-aot", cache, changed.get());
            return Optional.empty();
        }
        LOG.log(Level.DEBUG, "worker JVMs use the AOT cache {0}", cache);
        return Optional.of(cache.toAbsolutePath());
    }

    /**
     * An entry of the module path changed after {@code cache} was written: a jar, or a directory of jars (whose own time
     * moves when a jar is added or removed). The JVM rejects a cache whose jars changed, with errors in every worker log.
     */
    static Optional<Path> changedSince(Path cache, List<Path> modulePath) {
        try {
            long trained = Files.getLastModifiedTime(cache).toMillis();
            for (Path entry : modulePath) {
                if (!Files.exists(entry)) {
                    continue;
                }
                if (Files.getLastModifiedTime(entry).toMillis() > trained) {
                    return Optional.of(entry);
                }
                if (Files.isDirectory(entry)) {
                    try (Stream<Path> files = Files.list(entry)) {
                        for (Path file : files.toList()) {
                            if (Files.getLastModifiedTime(file).toMillis() > trained) {
                                return Optional.of(file);
                            }
                        }
                    }
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // unknown: the JVM's own check decides, at the cost of a warning in the worker's log
        }
    }

    /** The module path's entries, each as the real path when it exists, so links and {@code ..} do not count as a difference. */
    static List<Path> entries(String modulePath) {
        List<Path> entries = new ArrayList<>();
        if (modulePath == null || modulePath.isBlank()) {
            return entries;
        }
        for (String entry : modulePath.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path path = Path.of(entry).toAbsolutePath().normalize();
            try {
                entries.add(path.toRealPath());
            } catch (IOException e) {
                entries.add(path);
            }
        }
        return entries;
    }

    /** The file's text, or null when it cannot be read (then the cache is not used: its module path is unknown). */
    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return null;
        }
    }
}
