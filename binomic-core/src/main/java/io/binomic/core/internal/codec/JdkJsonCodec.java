package io.binomic.core.internal.codec;

import io.binomic.api.spi.PayloadCodec;

/** JSON codec on the JDK alone. TODO: implementation. */
public final class JdkJsonCodec implements PayloadCodec {
    @Override
    public String id() {
        return "json-jdk";
    }

    @Override
    public byte[] encode(Object value) {
        throw new UnsupportedOperationException("TODO");
    }

    @Override
    public <T> T decode(byte[] bytes, Class<T> type) {
        throw new UnsupportedOperationException("TODO");
    }
}
