package io.binomic.api.spi;
import io.binomic.api.PayloadDecodeException;

/**
 * Encodes task arguments to bytes and back. Implementations must be JSON (or another data-only
 * format): never Java serialization, never polymorphic typing driven by the payload, because
 * decoding untrusted bytes into arbitrary classes is a remote-code-execution hole.
 *
 * <p>Which codec an instance uses is chosen explicitly ({@code BinomicConfig.payloadCodec}, the
 * JDK codec {@code json-jdk} by default), never by what happens to be on the module path. Each
 * message records the {@link #id()} of the codec that wrote it in its
 * {@link Message#CODEC} header.
 *
 * <p>Every codec must agree with the others and be strict ({@code PayloadCodecContractTest} in
 * binomic-core's test jar is the suite): records are JSON objects of their components in
 * declaration order, an empty {@code Optional} is {@code null}, enums are their names,
 * {@code java.time} values ISO-8601 strings; decoding refuses an unknown property, a missing
 * component, {@code null} for a primitive, a fraction or out-of-range number for an integer and a
 * value of the wrong JSON type, with a {@link PayloadDecodeException} whose message
 * starts with the path of the field, such as {@code $.lines[1].quantity: ...}.
 */
public interface PayloadCodec {

    /** A short unique id such as {@code json-jdk} or {@code jackson}: letters, digits, '.', '_' and '-'. */
    String id();

    /** Encodes {@code value} (null allowed, for tasks without argument). */
    byte[] encode(Object value);

    /**
     * Decodes {@code bytes} into {@code type}.
     *
     * @throws PayloadDecodeException when the bytes do not fit the type, naming the field
     */
    <T> T decode(byte[] bytes, Class<T> type);
}
