package io.binomic.core.internal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;
import org.junit.jupiter.api.Test;

/** A daemon's own log lines name the broker's URL as the flag and setting the operator gives, as its workers' relayed lines do. */
class OperatorTermsFormatterTest {
    /** Found by an outside tester: the master's unreachable-broker warning said "check BrokerConfig.url", a name no shell user types. */
    @Test
    void theMastersBrokerWarningNamesTheFlagAndTheSettingNotTheApiField() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StreamHandler handler = new StreamHandler(bytes, new Formatter() {
            @Override
            public String format(LogRecord record) { return record.getLevel() + ": " + formatMessage(record) + "\n"; }
        });
        Logger logger = Logger.getAnonymousLogger();
        logger.setUseParentHandlers(false);
        logger.addHandler(handler);

        OperatorTermsFormatter.install(logger);
        OperatorTermsFormatter.install(logger);
        // The master's own line (MasterCommand.inspectBroker), with the Redis broker's hint in it.
        logger.log(Level.WARNING, "cannot check the broker before starting the workers: {0}; starting them anyway",
                "cannot connect to Redis at 127.0.0.1:1: Connection refused; is redis-server running? check BrokerConfig.url");
        logger.log(Level.WARNING, "check BrokerConfig.password, BrokerConfig.nosuch and WorkerConfig.concurrency");
        handler.flush();

        assertEquals("WARNING: cannot check the broker before starting the workers: cannot connect to Redis at 127.0.0.1:1:"
                + " Connection refused; is redis-server running? check --broker or broker.url (BINOMIC_BROKER_URL); starting them"
                + " anyway\nWARNING: check broker.password (BINOMIC_BROKER_PASSWORD), BrokerConfig.nosuch and worker.concurrency"
                + " (BINOMIC_WORKER_CONCURRENCY)\n", bytes.toString(StandardCharsets.UTF_8));
    }
}
