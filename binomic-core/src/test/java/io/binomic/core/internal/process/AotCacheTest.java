package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the master passes the worker AOT cache: only a cache that is there, trained for the workers'
 * module path, and never over the operator's own sharing options. (That a worker JVM opens it is
 * RuntimeImageTest's, in binomic-it.)
 */
class AotCacheTest {
    @TempDir
    Path home;

    private Path cache() throws Exception {
        Files.createDirectories(home.resolve("lib"));
        Files.createDirectories(home.resolve("app"));
        return Files.write(home.resolve("lib").resolve(AotCache.FILE_NAME), new byte[] {1});
    }

    @Test
    void noCacheFileAddsNothing() {
        assertEquals(Optional.empty(), AotCache.usableCache(List.of(), null, home, home.resolve("app").toString()));
    }

    @Test
    void aCacheInTheRuntimeIsUsedWhenTrainedForTheSameModulePath() throws Exception {
        Path cache = cache();
        Files.writeString(home.resolve("lib").resolve(AotCache.FILE_NAME + AotCache.MODULE_PATH_SUFFIX), home.resolve("app") + "\n");
        assertEquals(Optional.of(cache.toAbsolutePath()), AotCache.usableCache(List.of("-Xmx64m"), null, home,
                home.resolve("lib").resolve("..").resolve("app").toString()));
    }

    @Test
    void aCacheTrainedForAnotherModulePathIsNotPassed() throws Exception {
        cache();
        Files.writeString(home.resolve("lib").resolve(AotCache.FILE_NAME + AotCache.MODULE_PATH_SUFFIX), home.resolve("app") + "\n");
        assertEquals(Optional.empty(), AotCache.usableCache(List.of(), null, home,
                home.resolve("app") + java.io.File.pathSeparator + home.resolve("tasks.jar")));
    }

    @Test
    void aJarAddedOrReplacedAfterTrainingKeepsTheCacheFromTheWorkers() throws Exception {
        Path cache = cache();
        Files.writeString(home.resolve("lib").resolve(AotCache.FILE_NAME + AotCache.MODULE_PATH_SUFFIX), home.resolve("app") + "\n");
        Path app = home.resolve("app");
        Path jar = Files.write(app.resolve("binomic-core.jar"), new byte[] {1});
        FileTime trained = FileTime.fromMillis(System.currentTimeMillis());
        FileTime before = FileTime.fromMillis(trained.toMillis() - 60_000);
        Files.setLastModifiedTime(jar, before);
        Files.setLastModifiedTime(app, before);
        Files.setLastModifiedTime(cache, trained);
        assertEquals(Optional.of(cache.toAbsolutePath()), AotCache.usableCache(List.of(), null, home, app.toString()), "as trained");

        Path tasks = Files.write(app.resolve("my-tasks.jar"), new byte[] {2}); // README: cp my-tasks.jar runtime/app/
        Files.setLastModifiedTime(tasks, before);
        Files.setLastModifiedTime(app, FileTime.fromMillis(trained.toMillis() + 1000));
        assertEquals(Optional.empty(), AotCache.usableCache(List.of(), null, home, app.toString()), "a jar added");

        Files.setLastModifiedTime(app, before);
        Files.setLastModifiedTime(jar, FileTime.fromMillis(trained.toMillis() + 1000));
        assertEquals(Optional.empty(), AotCache.usableCache(List.of(), null, home, app.toString()), "a jar replaced in place");
    }

    @Test
    void theOperatorsOwnSharingOptionsAndNoneWin() throws Exception {
        cache();
        String modulePath = home.resolve("app").toString();
        for (String option : List.of("-XX:AOTCache=/x.aot", "-XX:AOTCacheOutput=/x.aot", "-XX:AOTMode=off", "-Xshare:off")) {
            assertEquals(Optional.empty(), AotCache.usableCache(List.of(option), null, home, modulePath), option);
        }
        assertEquals(Optional.empty(), AotCache.usableCache(List.of(), "none", home, modulePath));
    }

    @Test
    void thePropertyNamesAnotherCacheFile() throws Exception {
        Path other = Files.write(home.resolve("other.aot"), new byte[] {1});
        assertEquals(Optional.of(other.toAbsolutePath()), AotCache.usableCache(List.of(), other.toString(), home, "/anything"));
        assertEquals(List.of("-XX:AOTCache=" + other.toAbsolutePath(), "-Xmx64m"), withProperty(other.toString()));
    }

    private static List<String> withProperty(String value) {
        String before = System.getProperty(AotCache.PROPERTY);
        System.setProperty(AotCache.PROPERTY, value);
        try {
            return AotCache.workerOptions(List.of("-Xmx64m"));
        } finally {
            if (before == null) {
                System.clearProperty(AotCache.PROPERTY);
            } else {
                System.setProperty(AotCache.PROPERTY, before);
            }
        }
    }
}
