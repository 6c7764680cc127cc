package offsetlake.oracle;

import java.lang.reflect.Proxy;

/**
 * Do-nothing implementations of the coordinator runtime's callback interfaces (CoordinatorTimer,
 * CoordinatorExecutor). Replay never needs them to act: a broker's timers only fire later, as new
 * writes, which a load does not see. Each method returns its type's zero so a caller that asks
 * "is this key scheduled?" hears false rather than a NullPointerException.
 */
final class NoOps {
    private NoOps() {
    }

    static <T> T of(Class<T> type) {
        Object proxy = Proxy.newProxyInstance(NoOps.class.getClassLoader(), new Class<?>[] {type},
            (self, method, args) -> {
                switch (method.getName()) {
                    case "equals":
                        return self == args[0];
                    case "hashCode":
                        return System.identityHashCode(self);
                    case "toString":
                        return "no-op " + type.getSimpleName();
                    default:
                        return zeroOf(method.getReturnType());
                }
            });
        return type.cast(proxy);
    }

    private static Object zeroOf(Class<?> type) {
        if (!type.isPrimitive() || type == void.class) {
            return null;
        } else if (type == boolean.class) {
            return false;
        } else if (type == long.class) {
            return 0L;
        } else if (type == int.class) {
            return 0;
        } else if (type == short.class) {
            return (short) 0;
        } else if (type == byte.class) {
            return (byte) 0;
        } else if (type == char.class) {
            return (char) 0;
        } else if (type == float.class) {
            return 0f;
        }
        return 0d;
    }
}
