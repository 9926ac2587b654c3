package io.binomic.core.internal.memory;

import io.binomic.core.PartitionContractTest;

class MemoryPartitionContractTest extends PartitionContractTest {
    @Override
    protected String brokerUrl() {
        return "memory://";
    }
}
