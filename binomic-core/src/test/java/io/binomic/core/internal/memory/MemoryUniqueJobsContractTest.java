package io.binomic.core.internal.memory;

import io.binomic.core.UniqueJobsContractTest;

class MemoryUniqueJobsContractTest extends UniqueJobsContractTest {
    @Override
    protected String brokerUrl() {
        return "memory://";
    }
}
