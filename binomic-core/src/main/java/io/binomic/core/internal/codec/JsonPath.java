package io.binomic.core.internal.codec;

/**
 * Where a value sits in a JSON document, rendered like {@code $.items[2].price} in error
 * messages. Immutable; children share their parent.
 */
record JsonPath(JsonPath parent, String property, int index) {
    static final JsonPath ROOT = new JsonPath(null, null, -1);

    JsonPath property(String name) { return new JsonPath(this, name, -1); }

    JsonPath index(int position) { return new JsonPath(this, null, position); }

    @Override
    public String toString() {
        if (parent == null) {
            return "$";
        }
        if (property == null) {
            return parent + "[" + index + "]";
        }
        return isIdentifier(property)
                ? parent + "." + property
                : parent + "[" + JsonWriter.quote(property) + "]";
    }

    private static boolean isIdentifier(String name) {
        return !name.isEmpty()
                && Character.isJavaIdentifierStart(name.charAt(0))
                && name.chars().allMatch(Character::isJavaIdentifierPart);
    }
}
