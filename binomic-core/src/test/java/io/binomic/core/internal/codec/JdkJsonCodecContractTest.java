package io.binomic.core.internal.codec;

import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.PayloadCodecContractTest;

/** The codec contract for the JDK-only JSON codec. */
class JdkJsonCodecContractTest extends PayloadCodecContractTest {
    private final JdkJsonCodec codec = new JdkJsonCodec();

    @Override
    protected PayloadCodec codec() {
        return codec;
    }
}
