package io.binomic.it;

import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.process.WorkerSlots;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A master's worker segment read with the {@link WorkerSlots} of the build that wrote it, loaded
 * from that build's class path: a segment's layout belongs to its build, and a build reads only
 * its own format. What it reads comes back as this build's {@link SlotSnapshot}s, field by field
 * (the same records and enums, matched by name).
 */
final class OtherBuildSlots {
    private final Method openReadOnly;
    private final Method masterPid;
    private final Method snapshot;
    private final Method close;

    OtherBuildSlots(String classPath) {
        URL[] urls = Arrays.stream(classPath.split(File.pathSeparator)).filter(entry -> !entry.isBlank())
                .map(OtherBuildSlots::url).toArray(URL[]::new);
        // The platform loader as parent: io.binomic classes come from the other build only.
        ClassLoader loader = new URLClassLoader("other-build", urls, ClassLoader.getPlatformClassLoader());
        try {
            Class<?> slots = Class.forName(WorkerSlots.class.getName(), true, loader);
            openReadOnly = slots.getMethod("openReadOnly", Path.class);
            masterPid = slots.getMethod("masterPid");
            snapshot = slots.getMethod("snapshot");
            close = slots.getMethod("close");
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("the class path " + classPath + " has no usable " + WorkerSlots.class.getName(), e);
        }
    }

    /** The segment's master pid and slots; a RuntimeException when there is no readable segment yet. */
    ChaosMaster.Segment read(Path file) {
        Object slots = invoke(openReadOnly, null, file);
        try {
            long pid = (long) invoke(masterPid, slots);
            List<SlotSnapshot> snapshots = ((List<?>) invoke(snapshot, slots)).stream()
                    .map(slot -> (SlotSnapshot) convert(slot, SlotSnapshot.class)).toList();
            return new ChaosMaster.Segment(pid, snapshots);
        } finally {
            invoke(close, slots);
        }
    }

    /** The other build's value as this build's type {@code to}: records field by field, enums by name. */
    private static Object convert(Object value, Class<?> to) {
        if (value == null || to.isPrimitive() || to == String.class || to == Optional.class) {
            return value;
        }
        if (to.isEnum()) {
            return enumConstant(to, ((Enum<?>) value).name());
        }
        if (to.isRecord()) {
            RecordComponent[] components = to.getRecordComponents();
            Object[] arguments = new Object[components.length];
            Class<?>[] types = new Class<?>[components.length];
            for (int i = 0; i < components.length; i++) {
                types[i] = components[i].getType();
                try {
                    arguments[i] = convert(invoke(value.getClass().getMethod(components[i].getName()), value), types[i]);
                } catch (NoSuchMethodException e) {
                    throw new IllegalStateException("the other build's " + value.getClass().getName() + " has no "
                            + components[i].getName(), e);
                }
            }
            try {
                return to.getDeclaredConstructor(types).newInstance(arguments);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot make a " + to.getName() + " of the other build's", e);
            }
        }
        throw new IllegalStateException("no conversion of the other build's " + value.getClass().getName() + " to " + to.getName());
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object enumConstant(Class<?> type, String name) {
        return Enum.valueOf((Class) type, name);
    }

    private static Object invoke(Method method, Object target, Object... arguments) {
        try {
            return method.invoke(target, arguments);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static URL url(String entry) {
        try {
            return Path.of(entry).toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(entry, e);
        }
    }
}
