package io.binomic.it;

import io.binomic.core.TraceContextContractTest;

/** The trace context on a real Redis: through the stream fields, the delayed set of a retry and the dead-letter stream. */
class RedisTraceContextIT extends TraceContextContractTest {
    @Override
    protected String brokerUrl() {
        return RedisServer.shared().url();
    }
}
