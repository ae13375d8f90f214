package kraft.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON parser for the documents this jar ships ({@code kraft-schemas.json}): objects
 * become {@link LinkedHashMap}s, arrays {@link ArrayList}s, numbers {@link Long}s (no fractions or
 * exponents are ever written), strings, booleans and null as themselves.
 */
final class JsonReader {
    private final String text;
    private int pos;

    private JsonReader(String text) {
        this.text = text;
    }

    /** The value of a whole document. */
    static Object parse(String text) {
        JsonReader r = new JsonReader(text);
        Object value = r.value();
        r.skipSpace();
        if (r.pos != text.length()) {
            throw r.error("trailing characters");
        }
        return value;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("bad JSON at character " + pos + ": " + what);
    }

    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                return;
            }
            pos++;
        }
    }

    private char next() {
        skipSpace();
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        return text.charAt(pos);
    }

    private void expect(char c) {
        if (next() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private Object value() {
        char c = next();
        switch (c) {
            case '{': {
                pos++;
                Map<String, Object> map = new LinkedHashMap<>();
                if (next() == '}') {
                    pos++;
                    return map;
                }
                while (true) {
                    if (next() != '"') {
                        throw error("expected a key");
                    }
                    String key = string();
                    expect(':');
                    map.put(key, value());
                    char d = next();
                    pos++;
                    if (d == '}') {
                        return map;
                    }
                    if (d != ',') {
                        throw error("expected ',' or '}'");
                    }
                }
            }
            case '[': {
                pos++;
                List<Object> list = new ArrayList<>();
                if (next() == ']') {
                    pos++;
                    return list;
                }
                while (true) {
                    list.add(value());
                    char d = next();
                    pos++;
                    if (d == ']') {
                        return list;
                    }
                    if (d != ',') {
                        throw error("expected ',' or ']'");
                    }
                }
            }
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", null);
            default:
                return number();
        }
    }

    private Object word(String w, Object value) {
        if (!text.startsWith(w, pos)) {
            throw error("expected " + w);
        }
        pos += w.length();
        return value;
    }

    private Long number() {
        int start = pos;
        if (pos < text.length() && text.charAt(pos) == '-') {
            pos++;
        }
        while (pos < text.length() && Character.isDigit(text.charAt(pos))) {
            pos++;
        }
        if (pos == start || (pos == start + 1 && text.charAt(start) == '-')) {
            throw error("expected a value");
        }
        return Long.parseLong(text.substring(start, pos));
    }

    private String string() {
        pos++; // the opening quote
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"': sb.append('"'); break;
                case '\\': sb.append('\\'); break;
                case '/': sb.append('/'); break;
                case 'b': sb.append('\b'); break;
                case 'f': sb.append('\f'); break;
                case 'n': sb.append('\n'); break;
                case 'r': sb.append('\r'); break;
                case 't': sb.append('\t'); break;
                case 'u':
                    if (pos + 4 > text.length()) {
                        throw error("short \\u escape");
                    }
                    sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                    break;
                default:
                    throw error("bad escape \\" + e);
            }
        }
    }
}
