package io.binomic.it;

import io.binomic.api.BatchStatus;
import io.binomic.api.TaskContext;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The chaos suite's record of the executions of batch jobs, batch callbacks and workflow nodes,
 * beside {@link ChaosLedger} and kept the same way (one file per JVM, one {@code write(2)} per
 * line, outside the Redis under test). An execution writes
 * {@code S kind group id attempt pid start flow node summary} when it starts ({@code kind} J for a
 * batch job, C for a callback, N for a workflow node; {@code group} the batch's or workflow's id as
 * the handler's {@link TaskContext} says; {@code summary} what a callback's {@link TaskContext#batch()}
 * said, {@code total/succeeded/deadLettered/cancelled}, else {@code -}), then
 * {@code E id attempt pid start end} when its handler returns or {@code F id attempt pid start at}
 * when it throws its planned failure.
 */
final class ChaosFlowLedger {
    /** One execution; {@code end} is -1 when the handler never returned, {@code failedAt} -1 unless it threw its planned failure. */
    record Run(char kind, UUID group, String flow, String node, UUID id, int attempt, long pid, long start, long end, long failedAt,
               String summary) {
        boolean completed() {
            return end >= 0;
        }

        /** As the job ledger's run, for {@link ChaosReport#cause}. */
        ChaosLedger.Run asJobRun() {
            return new ChaosLedger.Run(id, attempt, pid, start, end, failedAt, -2, -1);
        }
    }

    private final FileOutputStream out;
    private final long pid = ProcessHandle.current().pid();
    private final ThreadLocal<Long> startedAt = new ThreadLocal<>();

    ChaosFlowLedger(Path directory) {
        out = ChaosLedger.open(directory, "flows-" + pid + ".log");
    }

    /** An execution of {@code step} starts, as a job of a batch or a workflow, or as a callback of a batch. */
    void started(ChaosFlows.Step step) {
        TaskContext context = TaskContext.current();
        long start = System.currentTimeMillis();
        startedAt.set(start);
        char kind;
        UUID group;
        String summary = "-";
        if (context.workflowId().isPresent()) {
            kind = 'N';
            group = context.workflowId().get();
        } else if (step.node().startsWith(ChaosFlows.CALLBACK_PREFIX)) {
            kind = 'C';
            group = context.batchId().orElse(null);
            BatchStatus s = context.batch().orElse(null);
            if (s != null) {
                summary = s.total() + "/" + s.succeeded() + "/" + s.deadLettered() + "/" + s.cancelled();
            }
        } else {
            kind = 'J';
            group = context.batchId().orElse(null);
        }
        write("S " + kind + " " + group + " " + context.messageId() + " " + context.attempt() + " " + pid + " " + start + " "
                + step.flow() + " " + step.node() + " " + summary);
    }

    void finished() {
        end("E");
    }

    void failing() {
        end("F");
    }

    private void end(String kind) {
        TaskContext context = TaskContext.current();
        write(kind + " " + context.messageId() + " " + context.attempt() + " " + pid + " " + startedAt.get() + " "
                + System.currentTimeMillis());
    }

    private void write(String line) {
        ChaosLedger.writeLine(out, line);
    }

    /** Every execution recorded in {@code directory}, in no particular order. */
    static List<Run> read(Path directory) {
        List<String> lines = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "flows-*.log")) {
            for (Path file : files) {
                lines.addAll(Files.readAllLines(file, StandardCharsets.US_ASCII));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return parse(lines);
    }

    /** The executions the ledger's lines describe (what {@link #read} does with a directory's files; tests build lines by hand). */
    static List<Run> parse(List<String> lines) {
        Map<String, Long> ends = new HashMap<>();
        Map<String, Long> failures = new HashMap<>();
        List<String[]> starts = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            if (f[0].equals("S") && f.length == 10) {
                starts.add(f);
            } else if ((f[0].equals("E") || f[0].equals("F")) && f.length == 6) {
                (f[0].equals("E") ? ends : failures).put(f[1] + " " + f[2] + " " + f[3] + " " + f[4], Long.parseLong(f[5]));
            }
        }
        List<Run> runs = new ArrayList<>(starts.size());
        for (String[] f : starts) {
            String key = f[3] + " " + f[4] + " " + f[5] + " " + f[6];
            runs.add(new Run(f[1].charAt(0), f[2].equals("null") ? null : UUID.fromString(f[2]), f[7], f[8], UUID.fromString(f[3]),
                    Integer.parseInt(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]), ends.getOrDefault(key, -1L),
                    failures.getOrDefault(key, -1L), f[9]));
        }
        return runs;
    }
}
