package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProgressBarTest {

    @Test
    void redrawsInPlaceAtMostEveryHundredMillisecondsAndAlwaysAtTheEnd() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        long[] now = {0};
        try (PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            ProgressBar bar = new ProgressBar(err, "purge q", 1000, () -> now[0]);
            bar.accept(0);
            now[0] = 50;
            bar.accept(500); // too soon: skipped
            now[0] = 150;
            bar.accept(600);
            now[0] = 160;
            bar.accept(1000); // the end is always drawn
            bar.finish();
        }
        assertEquals("\rpurge q [------------------------------] 0/1000 0%"
                + "\rpurge q [##################------------] 600/1000 60%"
                + "\rpurge q [##############################] 1000/1000 100%\n", bytes.toString(StandardCharsets.UTF_8));
    }
}
