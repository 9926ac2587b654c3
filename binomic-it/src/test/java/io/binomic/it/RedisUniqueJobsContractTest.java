package io.binomic.it;

import io.binomic.core.UniqueJobsContractTest;

/** Unique jobs and debounce on a real Redis: the Lua scripts of LuaScripts. */
class RedisUniqueJobsContractTest extends UniqueJobsContractTest {
    @Override
    protected String brokerUrl() {
        return RedisServer.shared().url();
    }
}
