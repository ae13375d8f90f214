package kraft.spark;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The record schemas {@link Payloads} interprets: {@code kraft-schemas.json}, which the build
 * generates from the Python schema objects ({@code kraft.spark.jvm.schemas}, whose docstring
 * describes the document). Every struct is resolved at one version, so decoding needs no version
 * logic. Immutable once loaded; {@link #get()} loads the jar's copy once.
 */
final class PayloadSchema {
    static final String RESOURCE = "/kraft-schemas.json";
    static final int FORMAT = 1;

    // Wire type codes.
    static final int BOOL = 0;
    static final int INT8 = 1;
    static final int INT16 = 2;
    static final int UINT16 = 3;
    static final int INT32 = 4;
    static final int UINT32 = 5;
    static final int INT64 = 6;
    static final int UUID = 7;
    static final int STRING = 8;
    static final int ARRAY = 9;
    static final int STRUCT = 10;

    // Where a field is in a struct's encoding at the struct's version.
    static final int REGULAR = 0;
    static final int TAGGED = 1;
    static final int ABSENT = 2;

    static final class Type {
        final int code;
        final Type element; // ARRAY
        final Struct struct; // STRUCT

        Type(int code, Type element, Struct struct) {
            this.code = code;
            this.element = element;
            this.struct = struct;
        }
    }

    static final class Field {
        /** {@code ,"name":} as it precedes the value in the JSON. */
        final String key;
        final Type type;
        final boolean nullable;
        final int wire;
        final long tag;
        /** Printed at all. */
        final boolean json;
        /** Left out when the value's JSON equals {@link #defaultJson}. */
        final boolean omitDefault;
        /** The JSON of the value the field has when it is not on the wire (null: never needed). */
        final String defaultJson;

        Field(String key, Type type, boolean nullable, int wire, long tag, boolean json, boolean omitDefault,
              String defaultJson) {
            this.key = key;
            this.type = type;
            this.nullable = nullable;
            this.wire = wire;
            this.tag = tag;
            this.json = json;
            this.omitDefault = omitDefault;
            this.defaultJson = defaultJson;
        }
    }

    static final class Struct {
        final String name;
        /** In declaration order (the JSON's order; the regular fields' wire order). */
        final Field[] fields;
        /** The tagged fields in declaration order; {@link #taggedIndex} finds one by tag. */
        final Field[] tagged;

        Struct(String name, Field[] fields) {
            this.name = name;
            this.fields = fields;
            List<Field> t = new ArrayList<>();
            for (Field f : fields) {
                if (f.wire == TAGGED) {
                    t.add(f);
                }
            }
            this.tagged = t.toArray(new Field[0]);
        }

        /** The index in {@link #tagged} of the field with this tag, or -1. */
        int taggedIndex(long tag) {
            Field[] t = tagged;
            for (int i = 0; i < t.length; i++) {
                if (t[i].tag == tag) {
                    return i;
                }
            }
            return -1;
        }
    }

    /** A metadata record type: its structs by version. */
    static final class Message {
        final String name;
        final int low;
        final Struct[] versions; // index: version - low

        Message(String name, int low, Struct[] versions) {
            this.name = name;
            this.low = low;
            this.versions = versions;
        }
    }

    /** A control record type. */
    static final class ControlSpec {
        final String name;
        final boolean flexible;
        final Struct struct;
        /** The result for a value that is null or does not decode. */
        final Payloads.Control corrupt;

        ControlSpec(String name, boolean flexible, Struct struct) {
            this.name = name;
            this.flexible = flexible;
            this.struct = struct;
            this.corrupt = new Payloads.Control(name, null);
        }
    }

    final int frameVersion;
    /** By type id (0 .. 0x7FFF; shorter when the ids are smaller): modelled metadata types. */
    final Message[] metadata;
    /** By type id: the names of the types kraft reads past (UnmodelledRecordError). */
    final String[] ignored;
    /** By type id: dump-log's payload type name (_peek_type_name's table). */
    final String[] typeNames;
    /** By type id (non-negative int16): control types. */
    final ControlSpec[] control;

    private PayloadSchema(Map<String, Object> doc) {
        long format = num(doc, "format");
        if (format != FORMAT) {
            throw new IllegalStateException("kraft-schemas.json has format " + format + ", expected " + FORMAT);
        }
        frameVersion = (int) num(doc, "frameVersion");
        List<Object> meta = list(doc, "metadata");
        List<Object> ign = list(doc, "ignored");
        List<Object> names = list(doc, "typeNames");
        List<Object> ctl = list(doc, "control");
        metadata = new Message[maxId(meta) + 1];
        for (Object o : meta) {
            Map<String, Object> m = map(o);
            List<Object> vs = list(m, "versions");
            int low = (int) num(map(vs.get(0)), "version");
            Struct[] structs = new Struct[vs.size()];
            for (int i = 0; i < structs.length; i++) {
                Map<String, Object> v = map(vs.get(i));
                if (num(v, "version") != low + i) {
                    throw new IllegalStateException("versions of " + m.get("name") + " are not contiguous");
                }
                structs[i] = struct(map(v.get("struct")));
            }
            metadata[(int) num(m, "id")] = new Message(str(m, "name"), low, structs);
        }
        ignored = new String[maxId(ign) + 1];
        for (Object o : ign) {
            Map<String, Object> m = map(o);
            ignored[(int) num(m, "id")] = str(m, "name");
        }
        typeNames = new String[maxId(names) + 1];
        for (Object o : names) {
            Map<String, Object> m = map(o);
            typeNames[(int) num(m, "id")] = str(m, "name");
        }
        control = new ControlSpec[maxId(ctl) + 1];
        for (Object o : ctl) {
            Map<String, Object> m = map(o);
            if (num(m, "version") < 0) {
                throw new IllegalStateException("bad control version");
            }
            control[(int) num(m, "id")] = new ControlSpec(
                    str(m, "name"), Boolean.TRUE.equals(m.get("flexible")), struct(map(m.get("struct"))));
        }
    }

    private static final class Holder {
        static final PayloadSchema INSTANCE = load();
    }

    /** The jar's schemas, loaded on first use. */
    static PayloadSchema get() {
        return Holder.INSTANCE;
    }

    private static PayloadSchema load() {
        try (InputStream in = PayloadSchema.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the kraft Spark jar");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return parse(out.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Schemas from the text of a {@code kraft-schemas.json}. */
    static PayloadSchema parse(String json) {
        return new PayloadSchema(map(JsonReader.parse(json)));
    }

    private static Struct struct(Map<String, Object> s) {
        List<Object> fs = list(s, "fields");
        Field[] fields = new Field[fs.size()];
        for (int i = 0; i < fields.length; i++) {
            Map<String, Object> f = map(fs.get(i));
            String wireName = str(f, "wire");
            int wire;
            switch (wireName) {
                case "regular": wire = REGULAR; break;
                case "tagged": wire = TAGGED; break;
                case "absent": wire = ABSENT; break;
                default: throw new IllegalStateException("bad wire kind " + wireName);
            }
            long tag = wire == TAGGED ? num(f, "tag") : -1;
            Object dflt = f.get("default");
            boolean json = Boolean.TRUE.equals(f.get("json"));
            boolean omit = Boolean.TRUE.equals(f.get("omitDefault"));
            if ((omit || (json && wire != REGULAR)) && !(dflt instanceof String)) {
                throw new IllegalStateException("field " + f.get("key") + " needs a default");
            }
            fields[i] = new Field(keyOf(str(f, "key")), type(f.get("type")),
                    Boolean.TRUE.equals(f.get("nullable")), wire, tag, json, omit, (String) dflt);
        }
        return new Struct(str(s, "name"), fields);
    }

    private static Type type(Object t) {
        if (t instanceof String) {
            switch ((String) t) {
                case "bool": return new Type(BOOL, null, null);
                case "int8": return new Type(INT8, null, null);
                case "int16": return new Type(INT16, null, null);
                case "uint16": return new Type(UINT16, null, null);
                case "int32": return new Type(INT32, null, null);
                case "uint32": return new Type(UINT32, null, null);
                case "int64": return new Type(INT64, null, null);
                case "uuid": return new Type(UUID, null, null);
                case "string": return new Type(STRING, null, null);
                default: throw new IllegalStateException("unsupported type " + t);
            }
        }
        Map<String, Object> m = map(t);
        if (m.containsKey("array")) {
            return new Type(ARRAY, type(m.get("array")), null);
        }
        return new Type(STRUCT, null, struct(map(m.get("struct"))));
    }

    private static String keyOf(String name) {
        StringBuilder sb = new StringBuilder(name.length() + 4).append(',');
        Payloads.appendJsonString(sb, name);
        return sb.append(':').toString();
    }

    private static int maxId(List<Object> entries) {
        int max = -1;
        for (Object o : entries) {
            long id = num(map(o), "id");
            if (id < 0 || id > 0x7FFF) {
                throw new IllegalStateException("type id " + id + " out of range");
            }
            max = Math.max(max, (int) id);
        }
        return max;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        if (!(o instanceof Map)) {
            throw new IllegalStateException("kraft-schemas.json: expected an object, got " + o);
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> m, String key) {
        Object o = m.get(key);
        if (!(o instanceof List)) {
            throw new IllegalStateException("kraft-schemas.json: " + key + " is not a list");
        }
        return (List<Object>) o;
    }

    private static long num(Map<String, Object> m, String key) {
        Object o = m.get(key);
        if (!(o instanceof Long)) {
            throw new IllegalStateException("kraft-schemas.json: " + key + " is not a number");
        }
        return (Long) o;
    }

    private static String str(Map<String, Object> m, String key) {
        Object o = m.get(key);
        if (!(o instanceof String)) {
            throw new IllegalStateException("kraft-schemas.json: " + key + " is not a string");
        }
        return (String) o;
    }
}
