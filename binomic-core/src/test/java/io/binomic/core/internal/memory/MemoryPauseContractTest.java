package io.binomic.core.internal.memory;

import io.binomic.core.PauseContractTest;

class MemoryPauseContractTest extends PauseContractTest {
    @Override
    protected String brokerUrl() {
        return "memory://";
    }
}
