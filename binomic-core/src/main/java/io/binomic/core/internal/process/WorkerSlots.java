package io.binomic.core.internal.process;

import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.FlowStats;
import io.binomic.core.internal.StatsRecorder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * The master's shared memory: a small file mapped by the master, by each of its worker JVMs and
 * by the {@code binomic workers} command. It holds a 64-byte header and one 384-byte (six cache
 * lines) slot per worker. This class alone knows the layout.
 *
 * <pre>
 * header (64 bytes)                  slot i at 64 + 384 * i (384 bytes)
 *   0 magic "BNMSLOTS"                  0 pid                                   (worker)
 *   8 format version (5)                8 heartbeat, epoch ms; for display      (worker)
 *  16 slot count                       16 state, int                           (worker; master resets)
 *  24 master pid                       20 command, int                         (master)
 *  32 master start, epoch ms           24 in-flight                            (worker)
 *  40 heartbeat interval, ms           32 succeeded                            (worker)
 *  48 heartbeat timeout, ms            40 failed                               (worker)
 *                                      48 retried                              (worker)
 *                                      56 dead-lettered                        (worker)
 *                                      64 heartbeat sequence, +1 per beat      (worker)
 *                                      72 stale settlements                    (worker)
 *                                      80 health, int: 0 not reported,
 *                                         1 consuming, 2 not consuming         (worker)
 *                                      84 supervision, int: 0 watched,
 *                                         1 gone, restart pending,
 *                                         2 hung, being stopped,
 *                                         3 not consuming, being stopped       (master)
 *                                      88 next start, epoch ms, 0 = none       (master)
 *                                      96 outcomes held, not yet written     (worker)
 *                                     104 successes among them                (worker)
 *                                     112 problem: 144 bytes of ASCII,
 *                                         NUL-padded, "..." at its end when
 *                                         cut; set while not consuming         (worker)
 *                                     256 batch callbacks started, by lag: 15
 *                                         cumulative counts, one per bound of
 *                                         StatsRecorder.BUCKET_SECONDS, then
 *                                         all (+Inf)                           (worker)
 *                                     376 their summed lag, ns                 (worker)
 * </pre>
 *
 * <p>Every field is accessed with release stores and acquire loads, so a reader that sees a
 * heartbeat sequence also sees the counters and health written before it. Each field has a
 * single writer at a time (the worker writes its state and health, the master its command and
 * supervision), which is why 32-bit fields written by different processes may share a word.
 *
 * <p>The master judges a heartbeat's age by when <em>it</em> last saw the sequence change, on
 * its own monotonic clock ({@code System.nanoTime}), never by comparing the epoch milliseconds
 * with its wall clock: a clock step (NTP) then neither makes every worker look hung nor hides a
 * hung one. The epoch milliseconds are only for {@code binomic workers} to show.
 *
 * <p>Slots are six whole cache lines, so the workers' heartbeats never invalidate each other's lines.
 */
public final class WorkerSlots implements AutoCloseable {
    /**
     * Batch callbacks a worker started, by how long each waited: cumulative counts, one per bound of
     * {@link StatsRecorder#BUCKET_SECONDS} then every callback (as {@link FlowStats.CallbackLag} has
     * them), and the summed wait in nanoseconds.
     */
    public record CallbackLag(long[] cumulative, long sumNanos) {
        public CallbackLag {
            if (cumulative.length != CALLBACK_LAG_COUNTS) {
                throw new IllegalArgumentException("a callback lag has " + CALLBACK_LAG_COUNTS + " counts, not " + cumulative.length);
            }
            cumulative = cumulative.clone();
        }

        /** The sum of {@code lags} (this process's callback queues and tasks). */
        public static CallbackLag sumOf(List<FlowStats.CallbackLag> lags) {
            long[] cumulative = new long[CALLBACK_LAG_COUNTS];
            long sum = 0;
            for (FlowStats.CallbackLag lag : lags) {
                for (int i = 0; i < cumulative.length; i++) {
                    cumulative[i] += lag.cumulative()[i];
                }
                sum += lag.sumNanos();
            }
            return new CallbackLag(cumulative, sum);
        }

        /** Callbacks started. */
        public long count() { return cumulative[cumulative.length - 1]; }

        @Override
        public long[] cumulative() { return cumulative.clone(); }
    }

    /** "BNMSLOTS" in ASCII: tells a slots file from any other file. */
    static final long MAGIC = 0x424E_4D53_4C4F_5453L;
    static final long FORMAT_VERSION = 5;
    /** Bytes of the header: one cache line. */
    static final long LINE = 64;
    /** Bytes of each slot: six cache lines. */
    static final long SLOT = 384;
    /**
     * Longest problem text a slot holds: the health check's own words (up to some 90 characters) and the start of the
     * broker client's error after them, which names what failed (a connection refused, and to where); longer ones are
     * cut, and end with {@link #CUT}.
     */
    static final int PROBLEM_BYTES = 144;
    /** The end of a problem text that was cut to fit its slot. */
    static final String CUT = "...";

    private static final long HEADER_MAGIC = 0;
    private static final long HEADER_VERSION = 8;
    private static final long HEADER_SLOT_COUNT = 16;
    private static final long HEADER_MASTER_PID = 24;
    private static final long HEADER_MASTER_STARTED = 32;
    private static final long HEADER_HEARTBEAT_INTERVAL = 40;
    private static final long HEADER_HEARTBEAT_TIMEOUT = 48;

    private static final long SLOT_PID = 0;
    private static final long SLOT_HEARTBEAT = 8;
    private static final long SLOT_STATE = 16;
    private static final long SLOT_COMMAND = 20;
    private static final long SLOT_IN_FLIGHT = 24;
    private static final long SLOT_SUCCEEDED = 32;
    private static final long SLOT_FAILED = 40;
    private static final long SLOT_RETRIED = 48;
    private static final long SLOT_DEAD_LETTERED = 56;
    private static final long SLOT_HEARTBEAT_SEQUENCE = 64;
    private static final long SLOT_STALE_SETTLEMENTS = 72;
    private static final long SLOT_HEALTH = 80;
    private static final long SLOT_SUPERVISION = 84;
    private static final long SLOT_NEXT_START = 88;
    private static final long SLOT_HELD = 96;
    private static final long SLOT_HELD_SUCCEEDED = 104;
    private static final long SLOT_PROBLEM = 112;
    private static final long SLOT_CALLBACK_LAG = 256;
    /** Cumulative counts of batch callbacks started: one per lag bound, then every one. */
    static final int CALLBACK_LAG_COUNTS = StatsRecorder.BUCKET_SECONDS.length + 1;
    private static final long SLOT_CALLBACK_LAG_SUM = SLOT_CALLBACK_LAG + Long.BYTES * CALLBACK_LAG_COUNTS;

    /** Most slots one master may have; bounds the file a reader maps from a header it does not trust. */
    public static final int MAX_SLOTS = 1024;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Arena arena;
    private final MemorySegment segment;
    private final int slotCount;

    private WorkerSlots(Arena arena, MemorySegment segment, int slotCount) {
        this.arena = arena;
        this.segment = segment;
        this.slotCount = slotCount;
    }

    /**
     * Creates a fresh segment for a master. An existing file is replaced, not reused: worker JVMs
     * of an earlier master may still map the old file, and must not write into the new one.
     *
     * @throws IllegalStateException when the file belongs to a master that is still alive
     */
    public static WorkerSlots create(Path file, int slotCount, long masterPid, Instant masterStartedAt,
                                     Duration heartbeatInterval, Duration heartbeatTimeout) {
        if (slotCount < 1 || slotCount > MAX_SLOTS) {
            throw new IllegalArgumentException("slotCount must be 1.." + MAX_SLOTS + ", was " + slotCount);
        }
        requireNoLiveMaster(file, masterPid);
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.deleteIfExists(file);
            Mapping mapping = map(file, FileChannel.MapMode.READ_WRITE, LINE + SLOT * slotCount,
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
            MemorySegment s = mapping.segment();
            LONG.setRelease(s, HEADER_SLOT_COUNT, (long) slotCount);
            LONG.setRelease(s, HEADER_MASTER_PID, masterPid);
            LONG.setRelease(s, HEADER_MASTER_STARTED, masterStartedAt.toEpochMilli());
            LONG.setRelease(s, HEADER_HEARTBEAT_INTERVAL, heartbeatInterval.toMillis());
            LONG.setRelease(s, HEADER_HEARTBEAT_TIMEOUT, heartbeatTimeout.toMillis());
            LONG.setRelease(s, HEADER_VERSION, FORMAT_VERSION);
            // Magic last: a reader that sees it sees a complete header.
            LONG.setRelease(s, HEADER_MAGIC, MAGIC);
            return new WorkerSlots(mapping.arena(), s, slotCount);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the worker segment " + file + ": " + e.getMessage(), e);
        }
    }

    private static void requireNoLiveMaster(Path file, long ourPid) {
        if (!Files.exists(file)) {
            return;
        }
        long owner;
        try (WorkerSlots existing = openReadOnly(file)) {
            owner = existing.masterPid();
        } catch (RuntimeException notASegment) {
            return; // a broken or foreign-format leftover: replacing it is safe
        }
        if (owner != ourPid && ProcessHandle.of(owner).map(ProcessHandle::isAlive).orElse(false)) {
            throw new IllegalStateException("the worker segment " + file + " belongs to master pid " + owner
                    + ", which is still running; stop it or give this master another state directory");
        }
    }

    /** Maps an existing segment for reading and writing: what a worker JVM does. */
    public static WorkerSlots open(Path file) {
        return openExisting(file, FileChannel.MapMode.READ_WRITE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** Maps an existing segment for reading only: what the {@code workers} command does. */
    public static WorkerSlots openReadOnly(Path file) { return openExisting(file, FileChannel.MapMode.READ_ONLY, StandardOpenOption.READ); }

    private static WorkerSlots openExisting(Path file, FileChannel.MapMode mode, StandardOpenOption... options) {
        try {
            long size = Files.size(file);
            if (size < LINE + SLOT) {
                throw new IllegalStateException(file + " is not a Binomic worker segment (" + size + " bytes)");
            }
            long magic;
            long version;
            long count;
            Mapping header = map(file, mode, LINE, options);
            try {
                magic = (long) LONG.getAcquire(header.segment(), HEADER_MAGIC);
                version = (long) LONG.getAcquire(header.segment(), HEADER_VERSION);
                count = (long) LONG.getAcquire(header.segment(), HEADER_SLOT_COUNT);
            } finally {
                header.arena().close();
            }
            if (magic != MAGIC) {
                throw new IllegalStateException(file + " is not a Binomic worker segment (bad magic)");
            }
            if (version != FORMAT_VERSION) {
                throw new IllegalStateException(file + " has segment format " + version + "; this Binomic reads format "
                        + FORMAT_VERSION + ": use the same Binomic version as the master");
            }
            if (count < 1 || count > MAX_SLOTS || size < LINE + SLOT * count) {
                throw new IllegalStateException(file + " is a damaged worker segment (" + count + " slots in " + size + " bytes)");
            }
            Mapping mapping = map(file, mode, LINE + SLOT * count, options);
            return new WorkerSlots(mapping.arena(), mapping.segment(), (int) count);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the worker segment " + file + ": " + e.getMessage(), e);
        }
    }

    private record Mapping(Arena arena, MemorySegment segment) { }

    private static Mapping map(Path file, FileChannel.MapMode mode, long size, StandardOpenOption... options)
            throws IOException {
        // Shared: the master's supervisors, the heartbeat thread and the command watcher touch it from several threads.
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, options)) {
            // The mapping outlives the channel; it lives until the arena closes.
            return new Mapping(arena, channel.map(mode, 0, size, arena));
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    public int slotCount() { return slotCount; }

    public long masterPid() { return (long) LONG.getAcquire(segment, HEADER_MASTER_PID); }

    public Instant masterStartedAt() { return Instant.ofEpochMilli((long) LONG.getAcquire(segment, HEADER_MASTER_STARTED)); }

    public Duration heartbeatInterval() { return Duration.ofMillis((long) LONG.getAcquire(segment, HEADER_HEARTBEAT_INTERVAL)); }

    /** Heartbeat age past which the master treats a live worker as hung. */
    public Duration heartbeatTimeout() { return Duration.ofMillis((long) LONG.getAcquire(segment, HEADER_HEARTBEAT_TIMEOUT)); }

    public Slot slot(int index) { return new Slot(Objects.checkIndex(index, slotCount)); }

    public List<SlotSnapshot> snapshot() { return IntStream.range(0, slotCount).mapToObj(i -> slot(i).snapshot()).toList(); }

    /** Printable ASCII of {@code text}, other characters as '?', cut to {@link #PROBLEM_BYTES} with {@link #CUT} at its end. */
    static byte[] ascii(String text) {
        String fits = text.length() <= PROBLEM_BYTES ? text : text.substring(0, PROBLEM_BYTES - CUT.length()) + CUT;
        byte[] bytes = new byte[fits.length()];
        for (int i = 0; i < bytes.length; i++) {
            char c = fits.charAt(i);
            bytes[i] = (byte) (c >= 0x20 && c < 0x7F ? c : '?');
        }
        return bytes;
    }

    /** Unmaps the segment. The file stays, so that {@code binomic workers} can show the last state. */
    @Override
    public void close() { arena.close(); }

    /** One worker's slot: a view over its cache line. */
    public final class Slot {
        private final int index;
        private final long base;

        private Slot(int index) {
            this.index = index;
            this.base = LINE + SLOT * index;
        }

        public int index() { return index; }

        /**
         * Clears the slot before the master starts a worker in it, so that nothing a previous
         * worker left (its pid, an old heartbeat, a drain command) is taken for the new one's.
         */
        public void reset() {
            for (long offset = SLOT - Long.BYTES; offset >= 0; offset -= Long.BYTES) {
                LONG.setRelease(segment, base + offset, 0L);
            }
        }

        public long pid() { return (long) LONG.getAcquire(segment, base + SLOT_PID); }

        public void pid(long pid) { LONG.setRelease(segment, base + SLOT_PID, pid); }

        /** Epoch milliseconds of the last heartbeat, 0 when none was written. For display: never judge age by it. */
        public long heartbeatMillis() { return (long) LONG.getAcquire(segment, base + SLOT_HEARTBEAT); }

        /** How many heartbeats the worker has written; the master watches it change. */
        public long heartbeatSequence() { return (long) LONG.getAcquire(segment, base + SLOT_HEARTBEAT_SEQUENCE); }

        /**
         * Writes a heartbeat: the wall-clock time, then the next sequence number. Written after the
         * counters, health and state, so readers see those at least as new. One writer per slot.
         */
        public void heartbeat(long epochMillis) {
            LONG.setRelease(segment, base + SLOT_HEARTBEAT, epochMillis);
            LONG.setRelease(segment, base + SLOT_HEARTBEAT_SEQUENCE, heartbeatSequence() + 1);
        }

        public WorkerState state() { return code(SLOT_STATE, WorkerState.values(), "worker state"); }

        public void state(WorkerState state) { code(SLOT_STATE, state); }

        public WorkerCommand command() { return code(SLOT_COMMAND, WorkerCommand.values(), "worker command"); }

        public void command(WorkerCommand command) { code(SLOT_COMMAND, command); }

        public WorkerCounters counters() {
            return new WorkerCounters(
                    (long) LONG.getAcquire(segment, base + SLOT_IN_FLIGHT),
                    (long) LONG.getAcquire(segment, base + SLOT_SUCCEEDED),
                    (long) LONG.getAcquire(segment, base + SLOT_FAILED),
                    (long) LONG.getAcquire(segment, base + SLOT_RETRIED),
                    (long) LONG.getAcquire(segment, base + SLOT_DEAD_LETTERED),
                    (long) LONG.getAcquire(segment, base + SLOT_STALE_SETTLEMENTS),
                    (long) LONG.getAcquire(segment, base + SLOT_HELD),
                    (long) LONG.getAcquire(segment, base + SLOT_HELD_SUCCEEDED));
        }

        public void counters(WorkerCounters counters) {
            LONG.setRelease(segment, base + SLOT_IN_FLIGHT, counters.inFlight());
            LONG.setRelease(segment, base + SLOT_SUCCEEDED, counters.succeeded());
            LONG.setRelease(segment, base + SLOT_FAILED, counters.failed());
            LONG.setRelease(segment, base + SLOT_RETRIED, counters.retried());
            LONG.setRelease(segment, base + SLOT_DEAD_LETTERED, counters.deadLettered());
            LONG.setRelease(segment, base + SLOT_STALE_SETTLEMENTS, counters.staleSettlements());
            LONG.setRelease(segment, base + SLOT_HELD, counters.held());
            LONG.setRelease(segment, base + SLOT_HELD_SUCCEEDED, counters.heldSucceeded());
        }

        /**
         * The batch callbacks the slot's worker started and how long they waited, over every callback
         * queue and task: the segment has room for a fixed number of fields, not for one histogram per
         * queue and task.
         */
        public CallbackLag callbackLag() {
            long[] cumulative = new long[CALLBACK_LAG_COUNTS];
            for (int i = 0; i < cumulative.length; i++) {
                cumulative[i] = (long) LONG.getAcquire(segment, base + SLOT_CALLBACK_LAG + (long) Long.BYTES * i);
            }
            return new CallbackLag(cumulative, (long) LONG.getAcquire(segment, base + SLOT_CALLBACK_LAG_SUM));
        }

        public void callbackLag(CallbackLag lag) {
            for (int i = 0; i < CALLBACK_LAG_COUNTS; i++) {
                LONG.setRelease(segment, base + SLOT_CALLBACK_LAG + (long) Long.BYTES * i, lag.cumulative()[i]);
            }
            LONG.setRelease(segment, base + SLOT_CALLBACK_LAG_SUM, lag.sumNanos());
        }

        public SlotHealth health() { return code(SLOT_HEALTH, SlotHealth.values(), "worker health"); }

        /** The problem the worker reported with its health (cut to {@value #PROBLEM_BYTES} ASCII bytes, ending "..."); empty when none. */
        public Optional<String> problem() {
            byte[] bytes = new byte[PROBLEM_BYTES];
            for (int i = 0; i < PROBLEM_BYTES; i += Long.BYTES) {
                long word = (long) LONG.getAcquire(segment, base + SLOT_PROBLEM + i);
                for (int b = 0; b < Long.BYTES; b++) {
                    bytes[i + b] = (byte) (word >>> (8 * b));
                }
            }
            int length = 0;
            while (length < PROBLEM_BYTES && bytes[length] != 0) {
                length++;
            }
            return length == 0 ? Optional.empty() : Optional.of(new String(bytes, 0, length, StandardCharsets.US_ASCII));
        }

        /**
         * Writes the worker's health: the problem text first, then the flag, so a reader that sees
         * "not consuming" also sees its reason.
         */
        public void health(WorkerHealth health) {
            byte[] text = health.problem().map(WorkerSlots::ascii).orElse(new byte[0]);
            for (int i = 0; i < PROBLEM_BYTES; i += Long.BYTES) {
                long word = 0;
                for (int b = 0; b < Long.BYTES && i + b < text.length; b++) {
                    word |= (text[i + b] & 0xFFL) << (8 * b);
                }
                LONG.setRelease(segment, base + SLOT_PROBLEM + i, word);
            }
            code(SLOT_HEALTH, switch (health.state()) {
                case CONSUMING -> SlotHealth.CONSUMING;
                case BROKER_UNREACHABLE -> SlotHealth.BROKER_UNREACHABLE;
                case STALLED -> SlotHealth.NOT_CONSUMING;
            });
        }

        /** What the master is doing about this slot's worker. */
        public Supervision supervision() { return code(SLOT_SUPERVISION, Supervision.values(), "supervision"); }

        /** When the master will start the slot's next worker, epoch ms; 0 when no start is pending. */
        public long nextStartMillis() { return (long) LONG.getAcquire(segment, base + SLOT_NEXT_START); }

        /** The master records what it is doing about the worker, and when it starts the next one (epoch ms, 0 = not planned). */
        public void supervision(Supervision supervision, long nextStartMillis) {
            LONG.setRelease(segment, base + SLOT_NEXT_START, nextStartMillis);
            code(SLOT_SUPERVISION, supervision);
        }

        /** The enum whose ordinal the int at {@code offset} holds. */
        private <E extends Enum<E>> E code(long offset, E[] values, String what) {
            int code = (int) INT.getAcquire(segment, base + offset);
            if (code < 0 || code >= values.length) {
                throw new IllegalStateException("unknown " + what + " code " + code + " in the worker segment");
            }
            return values[code];
        }

        private void code(long offset, Enum<?> value) { INT.setRelease(segment, base + offset, value.ordinal()); }

        /** All fields, heartbeat sequence first so the rest is at least as new as it. */
        public SlotSnapshot snapshot() {
            long sequence = heartbeatSequence();
            return new SlotSnapshot(index, pid(), heartbeatMillis(), sequence, state(), command(), counters(), health(), problem(),
                    supervision(), nextStartMillis());
        }
    }
}
