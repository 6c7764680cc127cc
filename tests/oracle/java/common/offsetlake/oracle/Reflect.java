package offsetlake.oracle;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

/** Private fields and no-argument methods by name, looked up through the class hierarchy. */
final class Reflect {
    private Reflect() {
    }

    static boolean hasField(Object target, String name) {
        return find(target.getClass(), name) != null;
    }

    static Object field(Object target, String name) {
        Field field = find(target.getClass(), name);
        if (field == null) {
            throw new IllegalStateException(target.getClass().getName() + " has no field " + name);
        }
        try {
            field.setAccessible(true);
            return field.get(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + name, e);
        }
    }

    /** Calls a public no-argument method; accessible even when declared by a package-private class. */
    static Object call(Object target, String name) {
        try {
            Method method = target.getClass().getMethod(name);
            method.setAccessible(true);
            return method.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot call " + target.getClass().getName() + "." + name, e);
        }
    }

    private static Field find(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (field.getName().equals(name)) {
                    return field;
                }
            }
        }
        return null;
    }
}
