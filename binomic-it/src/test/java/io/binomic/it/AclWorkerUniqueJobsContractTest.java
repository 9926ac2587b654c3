package io.binomic.it;

import io.binomic.core.UniqueJobsContractTest;

/** Unique jobs and debounce on a real Redis, connected as the worker ACL user of the documented rule sets. */
class AclWorkerUniqueJobsContractTest extends UniqueJobsContractTest {
    @Override
    protected String brokerUrl() {
        return AclRedis.url(AclRedis.shared(), AclRedis.WORKER);
    }
}
