package io.binomic.core.internal.codec;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Checks that the JDK codec can decode the declared argument types of tasks. Its writer encodes the
 * runtime value, so a component declared as an interface it cannot build ({@code CharSequence}
 * holding a String) would pass every submit and fail every run at the worker.
 */
public final class ArgumentTypes {
    /** Where each argument type is undecodable, if it is: a submit looks it up instead of walking the type again. */
    private static final ClassValue<Optional<String>> UNDECODABLE = new ClassValue<>() {
        @Override
        protected Optional<String> computeValue(Class<?> type) {
            return undecodable(type, type.getSimpleName(), new HashSet<>());
        }
    };

    private ArgumentTypes() { }

    /**
     * At registration: refuses a task whose argument this instance's worker could decode with no
     * codec at all. A worker decodes each message with the codec that wrote it, so with another
     * codec found (Jackson) its producers may use that one, and only their submits are checked.
     *
     * @param codecId the id of the codec the instance encodes with; only {@code json-jdk} is checked
     * @param codecsFound the ids of every codec this process has
     * @throws IllegalArgumentException naming the task, the component, its type and the fix
     */
    public static void requireDecodable(Collection<Task<?, ?>> tasks, String codecId, Set<String> codecsFound) {
        if (codecsFound.stream().allMatch(BinomicConfig.JDK_JSON_CODEC::equals)) {
            tasks.forEach(task -> requireDecodable(task, codecId));
        }
    }

    /**
     * At submit: refuses an argument the JDK codec would write but not read back.
     *
     * @param codecId the id of the codec that encodes it; only {@code json-jdk} is checked
     * @throws IllegalArgumentException naming the task, the component, its type and the fix
     */
    public static void requireDecodable(Task<?, ?> task, String codecId) {
        if (!BinomicConfig.JDK_JSON_CODEC.equals(codecId)) {
            return;
        }
        UNDECODABLE.get(task.argumentType()).ifPresent(where -> {
            throw new IllegalArgumentException("task '" + task.name() + "': argument " + where + ", which the JSON codec "
                    + BinomicConfig.JDK_JSON_CODEC + " cannot decode at the worker (it decodes " + JsonWriter.SUPPORTED_TYPES
                    + "); declare a type it decodes (String for text), or choose the Jackson codec with payloadCodec(\"jackson\")");
        });
    }

    /** Where in {@code type} (called {@code where}) a type the binder cannot build is declared, and which. */
    static Optional<String> undecodable(Type type, String where, Set<Class<?>> seenRecords) {
        Class<?> raw = JsonBinder.rawClass(type);
        if (raw == Void.class || raw.isPrimitive() || raw.isEnum() || raw == Object.class || JsonBinder.isScalar(raw)) {
            return Optional.empty();
        }
        if (raw == Optional.class) {
            return undecodable(JsonBinder.typeArgument(type, 0), where, seenRecords);
        }
        if (raw.isArray()) {
            Type element = type instanceof GenericArrayType generic ? generic.getGenericComponentType() : raw.getComponentType();
            return undecodable(element, where + "[]", seenRecords);
        }
        if (raw.isRecord()) {
            if (!seenRecords.add(raw)) {
                return Optional.empty(); // a recursive record: its components are being checked already
            }
            for (RecordComponent component : raw.getRecordComponents()) {
                Optional<String> found = undecodable(component.getGenericType(), where + "." + component.getName(), seenRecords);
                if (found.isPresent()) {
                    return found;
                }
            }
            return Optional.empty();
        }
        if ((Iterable.class.isAssignableFrom(raw) && raw.isAssignableFrom(ArrayList.class))
                || (Set.class.isAssignableFrom(raw) && raw.isAssignableFrom(LinkedHashSet.class))) {
            return undecodable(JsonBinder.typeArgument(type, 0), where + "[]", seenRecords);
        }
        if (Map.class.isAssignableFrom(raw) && raw.isAssignableFrom(LinkedHashMap.class)) {
            Class<?> key = JsonBinder.rawClass(JsonBinder.typeArgument(type, 0));
            if (key != String.class && key != Object.class) {
                return Optional.of(where + " is declared " + type.getTypeName() + ": JSON object keys are strings, so Map<String, ...>");
            }
            return undecodable(JsonBinder.typeArgument(type, 1), where + "{}", seenRecords);
        }
        return Optional.of(where + " is declared " + type.getTypeName());
    }
}
