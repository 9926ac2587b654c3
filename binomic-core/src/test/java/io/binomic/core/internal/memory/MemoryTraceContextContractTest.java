package io.binomic.core.internal.memory;

import io.binomic.core.TraceContextContractTest;

class MemoryTraceContextContractTest extends TraceContextContractTest {
    @Override
    protected String brokerUrl() {
        return "memory://";
    }
}
