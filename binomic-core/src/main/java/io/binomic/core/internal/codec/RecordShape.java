package io.binomic.core.internal.codec;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Constructor;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the codec needs to read and build a record: its components in declaration order and its
 * canonical constructor, made accessible once and cached per class.
 */
record RecordShape(List<Component> components, Constructor<?> constructor, Map<String, Integer> indexByName) {
    private static final String CODEC_MODULE = "io.binomic.core";

    /** One record component: its JSON property name, declared generic type and accessor. */
    record Component(String name, Type genericType, Class<?> rawType, Method accessor) { }

    private static final ClassValue<RecordShape> SHAPES = new ClassValue<>() {
        @Override
        protected RecordShape computeValue(Class<?> type) {
            RecordComponent[] recordComponents = type.getRecordComponents();
            List<Component> components = Arrays.stream(recordComponents)
                    .map(c -> new Component(c.getName(), c.getGenericType(), c.getType(), accessible(c.getAccessor())))
                    .toList();
            Class<?>[] parameterTypes = Arrays.stream(recordComponents).map(RecordComponent::getType).toArray(Class<?>[]::new);
            try {
                Map<String, Integer> indexByName = new HashMap<>();
                for (int i = 0; i < components.size(); i++) {
                    indexByName.put(components.get(i).name(), i);
                }
                return new RecordShape(components, accessible(type.getDeclaredConstructor(parameterTypes)), Map.copyOf(indexByName));
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException("record " + type.getName() + " has no canonical constructor", e);
            }
        }
    };

    /** The position of the component called {@code name}, or -1 when the record has none. */
    int indexOf(String name) { return indexByName.getOrDefault(name, -1); }

    /** The component names in declaration order, for error messages. */
    String componentNames() { return String.join(", ", components.stream().map(Component::name).toList()); }

    /**
     * The shape of {@code type}, a record class.
     *
     * @throws InaccessibleObjectException when the record's package is not open to this module;
     *     {@link #openPackageHint} says how to fix it
     */
    static RecordShape of(Class<?> type) { return SHAPES.get(type); }

    private static <T extends AccessibleObject> T accessible(T member) {
        // Needed for non-public records, and for public ones in packages not exported to us.
        member.setAccessible(true);
        return member;
    }

    /** The fix for a record this module may not reflect on. */
    static String openPackageHint(Class<?> type) {
        String pkg = type.getPackageName();
        return "cannot access record " + type.getName() + " in module " + type.getModule().getName()
                + ": open package " + pkg + " to " + CODEC_MODULE
                + " (add `opens " + pkg + " to " + CODEC_MODULE + ";` to module-info.java)";
    }
}
