package io.binomic.core.internal.worker;

/**
 * How handlers run: on the delivery's own thread, a shared watchdog interrupting a handler at its
 * deadline ({@link DirectTaskInvoker}).
 */
public final class TaskInvokers {
    private TaskInvokers() { }

    /** The invoker a worker, and the test mode, run handlers with. */
    public static TaskInvoker forWorkers() { return new DirectTaskInvoker(); }
}
