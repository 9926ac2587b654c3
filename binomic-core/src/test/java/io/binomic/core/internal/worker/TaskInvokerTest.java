package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The workers' invoker: the handler on the caller's thread, a shared watchdog enforcing its timeout. */
class TaskInvokerTest {

    static Stream<TaskInvoker> invokers() {
        return Stream.of(TaskInvokers.forWorkers());
    }

    /**
     * The watchdog and the handler's end race on every task whose handler ends near its deadline:
     * whichever wins, the outcome is a result or a timeout, and the watchdog's interrupt never
     * outlives the call (it would fail the settlement that follows on the same thread).
     */
    @Test
    void directInvokersTimeoutInterruptNeverOutlivesTheCall() throws Exception {
        TaskInvoker invoker = new DirectTaskInvoker();
        int timedOut = 0;
        int calls = 300;
        for (int i = 0; i < calls; i++) {
            // From well before the 1.5 ms deadline to well after it (the watchdog looks about once a millisecond).
            long busyUntil = System.nanoTime() + 300_000 + (i % 30) * 100_000;
            try {
                invoker.invoke(() -> {
                    while (System.nanoTime() < busyUntil && !Thread.currentThread().isInterrupted()) {
                        Thread.onSpinWait();
                    }
                    return null;
                }, Duration.ofNanos(1_500_000));
            } catch (TimeoutException e) {
                timedOut++;
            }
            assertTrue(!Thread.currentThread().isInterrupted(), "interrupt flag left set after call " + i);
        }
        assertTrue(timedOut > 0 && timedOut < calls, "some handlers end before their deadline and some after: " + timedOut);
    }

    @Test
    void directInvokerRunsTheHandlerOnTheCallersThread() throws Exception {
        Thread caller = Thread.currentThread();
        assertEquals(caller, new DirectTaskInvoker().invoke(Thread::currentThread, Duration.ofSeconds(5)));
    }

    @Test
    void workersUseTheDirectInvoker() {
        assertEquals("direct", TaskInvokers.forWorkers().name());
    }

    @ParameterizedTest
    @MethodSource("invokers")
    void returnsTheHandlersResult(TaskInvoker invoker) throws Exception {
        assertEquals("done", invoker.invoke(() -> "done", Duration.ofSeconds(5)));
    }

    @ParameterizedTest
    @MethodSource("invokers")
    void wrapsTheHandlersExceptionAsCause(TaskInvoker invoker) {
        var failure = assertThrows(ExecutionException.class,
                () -> invoker.invoke(() -> { throw new IllegalStateException("boom"); }, Duration.ofSeconds(5)));
        assertInstanceOf(IllegalStateException.class, failure.getCause());
        assertEquals("boom", failure.getCause().getMessage());
    }

    @ParameterizedTest
    @MethodSource("invokers")
    void overrunningHandlerTimesOutAndIsInterrupted(TaskInvoker invoker) throws Exception {
        CountDownLatch interrupted = new CountDownLatch(1);
        long start = System.nanoTime();
        assertThrows(TimeoutException.class, () -> invoker.invoke(() -> {
            try {
                Thread.sleep(Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
            return null;
        }, Duration.ofMillis(200)));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "the timeout must cut the 30 s task short");
        assertTrue(interrupted.await(5, TimeUnit.SECONDS), "the overrunning handler must be interrupted");
    }

    @ParameterizedTest
    @MethodSource("invokers")
    void interruptingTheCallerCancelsTheHandler(TaskInvoker invoker) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch handlerInterrupted = new CountDownLatch(1);
        AtomicBoolean callerSawInterrupt = new AtomicBoolean();
        Thread caller = Thread.ofVirtual().start(() -> {
            try {
                invoker.invoke(() -> {
                    started.countDown();
                    try {
                        Thread.sleep(Duration.ofSeconds(30));
                    } catch (InterruptedException e) {
                        handlerInterrupted.countDown();
                        throw e;
                    }
                    return null;
                }, Duration.ofSeconds(60));
            } catch (InterruptedException e) {
                callerSawInterrupt.set(true);
            } catch (ExecutionException e) {
                // The direct invoker runs the handler on the caller's thread, so it cannot tell an
                // outside interrupt from the handler's own: it reports what the handler threw, and
                // the worker, which knows whether it is stopping or a cancel was asked, decides
                // (WorkerTest.taskCancelledPastTheGrace..., JobHandleTest's cancel and own-interrupt tests).
                callerSawInterrupt.set(invoker.name().equals("direct") && e.getCause() instanceof InterruptedException);
            } catch (Exception e) {
                // any other outcome leaves callerSawInterrupt false
            }
        });
        assertTrue(started.await(5, TimeUnit.SECONDS));
        caller.interrupt();
        caller.join(Duration.ofSeconds(10));

        assertTrue(callerSawInterrupt.get(), "the worker must see the cancellation as an InterruptedException (no ack)");
        assertTrue(handlerInterrupted.await(5, TimeUnit.SECONDS), "the handler must be interrupted too");
    }

    /**
     * A JVM started without {@code --enable-preview} runs an embedded worker, whose overrunning
     * task times out: the invoker needs no preview API.
     */
    @Test
    void workerInAJvmWithoutPreviewRunsAndTimesOutItsTasks(@TempDir Path dir) throws Exception {
        List<String> classPath = new ArrayList<>(List.of(System.getProperty("jdk.module.path").split(File.pathSeparator)));
        // Surefire patches the test classes into the module; the child takes both on its class path.
        classPath.add(Path.of("target", "test-classes").toAbsolutePath().toString());
        Path log = dir.resolve("child.log");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m",
                "-cp", String.join(File.pathSeparator, classPath), NoPreviewWorkerMain.class.getName())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child JVM finished");
        String output = Files.readString(log);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.contains("invoker=direct succeeded=1 failed=1 deadLetterError=java.util.concurrent.TimeoutException"),
                output);
    }
}
