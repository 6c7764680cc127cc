package offsetlake.oracle;

import java.util.List;
import java.util.Map;

/**
 * Writes the oracle's answers as one line of JSON. Values are maps (key order kept), lists,
 * strings, numbers, booleans and null; nothing else is needed, so no JSON library is pulled
 * onto a classpath that must hold only the release's own jars.
 */
final class Json {
    private Json() {
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        append(out, value);
        return out.toString();
    }

    private static void append(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            appendString(out, (String) value);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            String separator = "";
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                out.append(separator);
                appendString(out, String.valueOf(entry.getKey()));
                out.append(": ");
                append(out, entry.getValue());
                separator = ", ";
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            String separator = "";
            for (Object item : (List<?>) value) {
                out.append(separator);
                append(out, item);
                separator = ", ";
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
        }
    }

    // Offset metadata is client-controlled text (confluent-kafka appends a NUL byte): every control
    // character is escaped so the answer stays one line.
    private static void appendString(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
