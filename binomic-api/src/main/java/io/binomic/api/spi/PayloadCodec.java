package io.binomic.api.spi;

/**
 * Encodes task arguments to bytes and back. Implementations must be JSON (or another data-only
 * format): never Java serialization, never polymorphic typing driven by the payload, because
 * decoding untrusted bytes into arbitrary classes is a remote-code-execution hole.
 */
public interface PayloadCodec {

    /** A short unique id such as {@code json-jdk} or {@code jackson}. */
    String id();

    /** Higher wins when several codecs are present and none is chosen explicitly. */
    default int priority() {
        return 0;
    }

    /** Encodes {@code value} (null allowed, for tasks without argument). */
    byte[] encode(Object value);

    /**
     * Decodes {@code bytes} into {@code type}.
     *
     * @throws io.binomic.api.PayloadDecodeException when the bytes do not fit the type
     */
    <T> T decode(byte[] bytes, Class<T> type);
}
