package kraft.spark;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Metadata and control record payloads as {@code kraft dump-log --cluster-metadata-decoder --json}
 * prints them: Java's twin of {@code kraft.spark.arrow_log._PayloadDecoder}, giving exactly what it
 * gives for every input.
 *
 * <p>The schemas are not written here: a small schema-driven decoder interprets
 * {@code kraft-schemas.json}, which the build generates from the Python schema objects
 * ({@code kraft.spark.jvm.schemas}). It decodes a value straight into compact JSON (Python's
 * {@code json.dumps(separators=(",", ":"), ensure_ascii=False)}), checking it as strictly as
 * {@code kraft.protocol}'s codec: any value that codec refuses is {@link #NOT_METADATA} (a data
 * record) or a null payload (a control record).
 *
 * <p>Not thread-safe: one instance per reader thread (it reuses its buffers and caches results).
 */
public final class Payloads {
    /** record_type, record_version (-1: null), payload of a data record. */
    public static final class Decoded {
        public final String recordType;
        public final int recordVersion;
        public final String payload;

        public Decoded(String recordType, int recordVersion, String payload) {
            this.recordType = recordType;
            this.recordVersion = recordVersion;
            this.payload = payload;
        }
    }

    /** control_type, payload of a control record. */
    public static final class Control {
        public final String controlType;
        public final String payload;

        public Control(String controlType, String payload) {
            this.controlType = controlType;
            this.payload = payload;
        }
    }

    public static final Decoded NOT_METADATA = new Decoded(null, -1, null);

    private static final Control NO_CONTROL = new Control(null, null);
    private static final Control UNKNOWN_CONTROL = new Control("UNKNOWN", null);

    // Decoded values are cached by their bytes, as arrow_log caches them: values of at most this
    // many bytes, at most this many of them (a power of two). Python drops its dict when full; here
    // a value replaces the one in its slot (no per-entry allocation but the key's copy).
    static final int CACHE_MAX_VALUE = 512;
    static final int CACHE_SLOTS = 16384;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    // Kafka's limit on a string's length in bytes (kraft.protocol.primitives.MAX_STRING_BYTES).
    private static final int MAX_STRING_BYTES = 0x7FFF;
    private static final int MAX_INT16 = 0x7FFF;
    // A builder grown past this by one huge record is not kept.
    private static final int MAX_KEPT_CHARS = 1 << 20;

    private static final char[] BASE64URL =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".toCharArray();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** The value does not decode (thrown without a stack trace: it is control flow here). */
    private static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed() {
            super(null, null, false, false);
        }
    }

    private static final Malformed MALFORMED = new Malformed();

    private final PayloadSchema schema;
    private final boolean decode; // false: none(), which decodes nothing
    // The cache, direct-mapped by a hash of the value: a slot holds the last value that fell in it.
    private final byte[][] cacheKeys = new byte[CACHE_SLOTS][];
    private final int[] cacheHashes = new int[CACHE_SLOTS];
    private final Decoded[] cacheValues = new Decoded[CACHE_SLOTS];
    private StringBuilder sb = new StringBuilder(512);
    // The value being decoded: bytes [p, end) of b are left (end is narrowed inside a tagged field).
    private byte[] b;
    private int p;
    private int end;
    private boolean flexible;
    // Per-struct scratch (slot positions and segment bounds of tagged fields), used as a stack.
    private int[] scratch = new int[96];
    private int top;

    public Payloads() {
        this(PayloadSchema.get());
    }

    Payloads(PayloadSchema schema) {
        this(schema, true);
    }

    private Payloads(PayloadSchema schema, boolean decode) {
        this.schema = schema;
        this.decode = decode;
    }

    /**
     * A decoder that decodes nothing: every record comes out as neither metadata nor control
     * (nulls), for a read whose query uses none of control_type, record_type, record_version and
     * payload, and does not filter on the record type.
     */
    public static Payloads none() {
        return new Payloads(null, false);
    }

    /** A data record's value (bytes [off, off+len) of buf; len -1: a null value). */
    public Decoded metadata(byte[] buf, int off, int len) {
        if (!decode || len <= 0 || buf[off] != schema.frameVersion) {
            // Not an ApiMessageAndVersion frame (a test-raft-server payload, say): nor worth caching.
            return NOT_METADATA;
        }
        if (len > CACHE_MAX_VALUE) {
            return decodeMetadata(buf, off, len);
        }
        int h = hash(buf, off, len);
        int slot = h & (CACHE_SLOTS - 1);
        byte[] k = cacheKeys[slot];
        if (k != null && cacheHashes[slot] == h && Arrays.equals(k, 0, k.length, buf, off, off + len)) {
            return cacheValues[slot];
        }
        Decoded decoded = decodeMetadata(buf, off, len);
        cacheKeys[slot] = Arrays.copyOfRange(buf, off, off + len);
        cacheHashes[slot] = h;
        cacheValues[slot] = decoded;
        return decoded;
    }

    /** A control record (key and value as above). */
    public Control control(byte[] keyBuf, int keyOff, int keyLen, byte[] valueBuf, int valueOff, int valueLen) {
        if (!decode || keyLen < 4) {
            return NO_CONTROL; // a null or short key: control_type_of raises CorruptRecordError
        }
        int version = (short) (((keyBuf[keyOff] & 0xFF) << 8) | (keyBuf[keyOff + 1] & 0xFF));
        int type = (short) (((keyBuf[keyOff + 2] & 0xFF) << 8) | (keyBuf[keyOff + 3] & 0xFF));
        if (version < 0) {
            return NO_CONTROL;
        }
        PayloadSchema.ControlSpec[] specs = schema.control;
        PayloadSchema.ControlSpec spec = type >= 0 && type < specs.length ? specs[type] : null;
        if (spec == null) {
            return UNKNOWN_CONTROL;
        }
        if (valueLen < 0) {
            return spec.corrupt;
        }
        try {
            start(valueBuf, valueOff, valueLen, spec.flexible);
            struct(spec.struct);
            if (p != end) {
                return spec.corrupt; // trailing bytes
            }
            return new Control(spec.name, finish());
        } catch (Malformed e) {
            return spec.corrupt;
        } finally {
            b = null;
        }
    }

    /** dump-log's type name from a value's frame header without decoding (null: none). */
    public static String peekTypeName(byte[] buf, int off, int len) {
        PayloadSchema schema = PayloadSchema.get();
        if (len < 3 || buf[off] != schema.frameVersion) {
            return null;
        }
        int typeId = 0;
        int shift = 0;
        for (int i = 1, n = Math.min(len, 4); i < n; i++) {
            int x = buf[off + i] & 0xFF;
            typeId |= (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                String[] names = schema.typeNames;
                return typeId < names.length ? names[typeId] : null;
            }
            shift += 7;
        }
        return null;
    }

    // ---------------------------------------------------------------------------------------------

    private Decoded decodeMetadata(byte[] buf, int off, int len) {
        try {
            start(buf, off + 1, len - 1, true); // the frame version: checked by the caller
            long typeId = uvarint();
            long version = uvarint();
            if (typeId > MAX_INT16 || version > MAX_INT16) {
                return NOT_METADATA;
            }
            PayloadSchema.Message[] types = schema.metadata;
            PayloadSchema.Message m = typeId < types.length ? types[(int) typeId] : null;
            if (m == null) {
                String[] ignored = schema.ignored;
                String name = typeId < ignored.length ? ignored[(int) typeId] : null;
                return name == null ? NOT_METADATA : new Decoded(name, (int) version, null);
            }
            int index = (int) version - m.low;
            if (index < 0 || index >= m.versions.length) {
                return NOT_METADATA;
            }
            struct(m.versions[index]);
            if (p != end) {
                return NOT_METADATA; // trailing bytes
            }
            return new Decoded(m.name, (int) version, finish());
        } catch (Malformed e) {
            return NOT_METADATA;
        } finally {
            b = null;
        }
    }

    /** A hash of bytes [off, off+len), eight at a time. */
    static int hash(byte[] buf, int off, int len) {
        long h = len * GOLDEN;
        int i = off;
        int end = off + len;
        for (; i + 8 <= end; i += 8) {
            h = (h ^ (long) LONGS.get(buf, i)) * GOLDEN;
            h ^= h >>> 29;
        }
        for (; i < end; i++) {
            h = (h ^ (buf[i] & 0xFF)) * GOLDEN;
        }
        h ^= h >>> 32;
        return (int) (h ^ (h >>> 15));
    }

    private void start(byte[] buf, int off, int len, boolean flexible) {
        b = buf;
        p = off;
        end = off + len;
        this.flexible = flexible;
        top = 0;
        if (sb.capacity() > MAX_KEPT_CHARS) {
            sb = new StringBuilder(512);
        }
        sb.setLength(0);
    }

    private String finish() {
        return sb.toString();
    }

    private void need(int n) throws Malformed {
        if (n > end - p) {
            throw MALFORMED;
        }
    }

    /** An unsigned varint of at most 5 bytes whose value fits 32 bits (Reader.unsigned_varint). */
    private long uvarint() throws Malformed {
        int pos = p;
        if (pos >= end) {
            throw MALFORMED;
        }
        byte first = b[pos];
        if (first >= 0) {
            p = pos + 1;
            return first;
        }
        long value = 0;
        int shift = 0;
        for (int i = 0; i < 5; i++) {
            if (pos >= end) {
                throw MALFORMED;
            }
            int x = b[pos++] & 0xFF;
            value |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                if ((value >>> 32) != 0) {
                    throw MALFORMED;
                }
                p = pos;
                return value;
            }
            shift += 7;
        }
        throw MALFORMED;
    }

    private int int16() {
        int pos = p;
        p = pos + 2;
        return (short) (((b[pos] & 0xFF) << 8) | (b[pos + 1] & 0xFF));
    }

    private int int32() {
        int pos = p;
        byte[] b = this.b;
        p = pos + 4;
        return ((b[pos] & 0xFF) << 24) | ((b[pos + 1] & 0xFF) << 16) | ((b[pos + 2] & 0xFF) << 8)
                | (b[pos + 3] & 0xFF);
    }

    private long int64() {
        long hi = int32() & 0xFFFFFFFFL;
        long lo = int32() & 0xFFFFFFFFL;
        return (hi << 32) | lo;
    }

    /**
     * A struct's JSON, its fields in declaration order. Every field is written as
     * {@code ,"name":value}; the first comma then becomes the opening brace. Tagged fields come
     * last on the wire: they are rendered after the regular ones and, when that is not already
     * their place, moved to it (the builder position reached at their declaration: their slot).
     */
    private void struct(PayloadSchema.Struct s) throws Malformed {
        StringBuilder sb = this.sb;
        int open = sb.length();
        PayloadSchema.Field[] tagged = s.tagged;
        int nt = tagged.length;
        int base = top;
        if (nt > 0) {
            if (base + 3 * nt > scratch.length) {
                scratch = Arrays.copyOf(scratch, Math.max(2 * scratch.length, base + 3 * nt));
            }
            top = base + 3 * nt;
        }
        int k = 0;
        for (PayloadSchema.Field f : s.fields) {
            if (f.wire == PayloadSchema.REGULAR) {
                int seg = sb.length();
                sb.append(f.key);
                value(f.type, f.nullable);
                if (!f.json || (f.omitDefault && renderedEquals(seg + f.key.length(), f.defaultJson))) {
                    sb.setLength(seg);
                }
            } else if (f.wire == PayloadSchema.TAGGED) {
                scratch[base + k] = sb.length(); // its slot
                scratch[base + nt + k] = -1; // not on the wire (yet)
                k++;
            } else if (f.json && !f.omitDefault) {
                sb.append(f.key).append(f.defaultJson); // absent in this version: its default
            }
        }
        if (flexible) {
            taggedFields(s, base);
        }
        top = base;
        if (sb.length() == open) {
            sb.append("{}");
        } else {
            sb.setCharAt(open, '{');
            sb.append('}');
        }
    }

    /** A flexible struct's tagged-field section (_Plan.decode's rules), then its fields placed. */
    private void taggedFields(PayloadSchema.Struct s, int base) throws Malformed {
        StringBuilder sb = this.sb;
        PayloadSchema.Field[] tagged = s.tagged;
        int nt = tagged.length;
        int contentEnd = sb.length();
        long count = uvarint();
        // Each tagged field takes at least two bytes (tag and size).
        if (count * 2 > end - p) {
            throw MALFORMED;
        }
        long lastTag = -1;
        for (long i = 0; i < count; i++) {
            long tag = uvarint();
            long size = uvarint();
            if (tag <= lastTag) {
                throw MALFORMED; // out of order or repeated
            }
            lastTag = tag;
            if (size > end - p) {
                throw MALFORMED;
            }
            int payloadEnd = p + (int) size;
            int k = nt == 0 ? -1 : s.taggedIndex(tag);
            if (k < 0) {
                p = payloadEnd; // an unknown tag: kept by Python, never printed
                continue;
            }
            PayloadSchema.Field f = tagged[k];
            int outerEnd = end;
            end = payloadEnd;
            int seg = sb.length();
            sb.append(f.key);
            value(f.type, f.nullable);
            if (p != end) {
                throw MALFORMED; // trailing bytes inside the tagged field
            }
            end = outerEnd;
            if (!f.json || (f.omitDefault && renderedEquals(seg + f.key.length(), f.defaultJson))) {
                sb.setLength(seg);
                continue;
            }
            scratch[base + nt + k] = seg;
            scratch[base + 2 * nt + k] = sb.length();
        }
        if (nt == 0) {
            return;
        }
        // In place already when every printed tagged field was rendered, in declaration order, and
        // belongs after all the regular fields (PartitionChangeRecord's usual case).
        boolean inPlace = true;
        int lastSeg = -1;
        for (int k = 0; k < nt; k++) {
            int seg = scratch[base + nt + k];
            if (seg < 0) {
                PayloadSchema.Field f = tagged[k];
                if (f.json && !f.omitDefault) {
                    inPlace = false; // its default is printed, at its slot
                    break;
                }
                continue;
            }
            if (scratch[base + k] != contentEnd || seg < lastSeg) {
                inPlace = false;
                break;
            }
            lastSeg = seg;
        }
        if (inPlace) {
            return;
        }
        String[] parts = new String[nt];
        for (int k = 0; k < nt; k++) {
            int seg = scratch[base + nt + k];
            if (seg >= 0) {
                parts[k] = sb.substring(seg, scratch[base + 2 * nt + k]);
            } else if (tagged[k].json && !tagged[k].omitDefault) {
                parts[k] = tagged[k].key + tagged[k].defaultJson;
            }
        }
        sb.setLength(contentEnd);
        // Last slot first, so that the earlier slots stay where they were.
        for (int k = nt - 1; k >= 0; k--) {
            if (parts[k] != null) {
                sb.insert(scratch[base + k], parts[k]);
            }
        }
    }

    private boolean renderedEquals(int from, String text) {
        StringBuilder sb = this.sb;
        int n = text.length();
        if (sb.length() - from != n) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (sb.charAt(from + i) != text.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private void value(PayloadSchema.Type t, boolean nullable) throws Malformed {
        StringBuilder sb = this.sb;
        switch (t.code) {
            case PayloadSchema.INT8:
                need(1);
                sb.append((int) b[p++]);
                return;
            case PayloadSchema.INT16:
                need(2);
                sb.append(int16());
                return;
            case PayloadSchema.UINT16:
                need(2);
                sb.append(int16() & 0xFFFF);
                return;
            case PayloadSchema.INT32:
                need(4);
                sb.append(int32());
                return;
            case PayloadSchema.UINT32:
                need(4);
                sb.append(int32() & 0xFFFFFFFFL);
                return;
            case PayloadSchema.INT64:
                need(8);
                sb.append(int64());
                return;
            case PayloadSchema.BOOL:
                need(1);
                sb.append(b[p++] != 0 ? "true" : "false"); // Kafka reads any non-zero byte as true
                return;
            case PayloadSchema.UUID:
                need(16);
                uuid();
                return;
            case PayloadSchema.STRING:
                string(nullable);
                return;
            case PayloadSchema.ARRAY:
                array(t.element, nullable);
                return;
            case PayloadSchema.STRUCT:
                if (nullable) {
                    need(1);
                    if (b[p++] < 0) {
                        sb.append("null"); // Kafka's nullable struct: int8 -1 for null
                        return;
                    }
                }
                struct(t.struct);
                return;
            default:
                throw new IllegalStateException("type code " + t.code);
        }
    }

    /** A length or count: compact (unsigned varint of n + 1) or int16/int32; -1: null. */
    private long length(boolean wide, boolean nullable) throws Malformed {
        long n;
        if (flexible) {
            n = uvarint() - 1;
        } else if (wide) {
            need(4);
            n = int32();
        } else {
            need(2);
            n = int16();
        }
        if (n < 0) {
            if (n == -1 && nullable) {
                return -1;
            }
            throw MALFORMED;
        }
        // More than the bytes left is a lie (every element takes at least one byte).
        if (n > end - p) {
            throw MALFORMED;
        }
        return n;
    }

    private void array(PayloadSchema.Type element, boolean nullable) throws Malformed {
        long n = length(true, nullable);
        StringBuilder sb = this.sb;
        if (n < 0) {
            sb.append("null");
            return;
        }
        if (n == 0) {
            sb.append("[]");
            return;
        }
        int open = sb.length();
        if (element.code == PayloadSchema.INT32) {
            if (4 * n > end - p) {
                throw MALFORMED;
            }
            for (long i = 0; i < n; i++) {
                sb.append(',').append(int32());
            }
        } else {
            for (long i = 0; i < n; i++) {
                sb.append(',');
                value(element, false);
            }
        }
        sb.setCharAt(open, '[');
        sb.append(']');
    }

    private void string(boolean nullable) throws Malformed {
        long n = length(false, nullable);
        if (n < 0) {
            sb.append("null");
            return;
        }
        if (n > MAX_STRING_BYTES) {
            throw MALFORMED;
        }
        int from = p;
        int to = from + (int) n;
        sb.append('"');
        utf8(from, to);
        sb.append('"');
        p = to;
    }

    /**
     * Bytes [from, to) of the value as the inside of a JSON string: strict UTF-8 (Python's codec
     * refuses overlong forms, surrogates, code points past U+10FFFF and cut sequences), escaped
     * as Python's json module escapes with ensure_ascii=False.
     */
    private void utf8(int from, int to) throws Malformed {
        byte[] b = this.b;
        StringBuilder sb = this.sb;
        int i = from;
        while (i < to) {
            int c = b[i];
            if (c >= 0) {
                if (c >= 0x20 && c != '"' && c != '\\') {
                    sb.append((char) c);
                } else {
                    escape(sb, c);
                }
                i++;
                continue;
            }
            c &= 0xFF;
            if (c < 0xC2) {
                throw MALFORMED; // a continuation byte, or an overlong 2-byte form
            }
            if (c < 0xE0) {
                if (to - i < 2) {
                    throw MALFORMED;
                }
                int c1 = b[i + 1] & 0xFF;
                if ((c1 & 0xC0) != 0x80) {
                    throw MALFORMED;
                }
                sb.append((char) (((c & 0x1F) << 6) | (c1 & 0x3F)));
                i += 2;
            } else if (c < 0xF0) {
                if (to - i < 3) {
                    throw MALFORMED;
                }
                int c1 = b[i + 1] & 0xFF;
                int c2 = b[i + 2] & 0xFF;
                int lo = c == 0xE0 ? 0xA0 : 0x80; // no overlong forms
                int hi = c == 0xED ? 0x9F : 0xBF; // no surrogates
                if (c1 < lo || c1 > hi || (c2 & 0xC0) != 0x80) {
                    throw MALFORMED;
                }
                sb.append((char) (((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F)));
                i += 3;
            } else if (c < 0xF5) {
                if (to - i < 4) {
                    throw MALFORMED;
                }
                int c1 = b[i + 1] & 0xFF;
                int c2 = b[i + 2] & 0xFF;
                int c3 = b[i + 3] & 0xFF;
                int lo = c == 0xF0 ? 0x90 : 0x80; // no overlong forms
                int hi = c == 0xF4 ? 0x8F : 0xBF; // nothing past U+10FFFF
                if (c1 < lo || c1 > hi || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80) {
                    throw MALFORMED;
                }
                sb.appendCodePoint(((c & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F));
                i += 4;
            } else {
                throw MALFORMED;
            }
        }
    }

    private static void escape(StringBuilder sb, int c) {
        switch (c) {
            case '"': sb.append("\\\""); return;
            case '\\': sb.append("\\\\"); return;
            case '\n': sb.append("\\n"); return;
            case '\r': sb.append("\\r"); return;
            case '\t': sb.append("\\t"); return;
            case '\b': sb.append("\\b"); return;
            case '\f': sb.append("\\f"); return;
            default:
                sb.append("\\u00").append(HEX[(c >> 4) & 0xF]).append(HEX[c & 0xF]);
        }
    }

    /** A JSON string literal of {@code s} as Python's json.dumps(ensure_ascii=False) writes it. */
    static void appendJsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == '"' || c == '\\') {
                escape(sb, c);
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }

    /** Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, unpadded (22 characters). */
    private void uuid() {
        byte[] b = this.b;
        StringBuilder sb = this.sb;
        int pos = p;
        sb.append('"');
        for (int i = 0; i < 15; i += 3) {
            int v = ((b[pos + i] & 0xFF) << 16) | ((b[pos + i + 1] & 0xFF) << 8) | (b[pos + i + 2] & 0xFF);
            sb.append(BASE64URL[v >>> 18]).append(BASE64URL[(v >>> 12) & 0x3F])
                    .append(BASE64URL[(v >>> 6) & 0x3F]).append(BASE64URL[v & 0x3F]);
        }
        int last = b[pos + 15] & 0xFF;
        sb.append(BASE64URL[last >>> 2]).append(BASE64URL[(last & 0x3) << 4]).append('"');
        p = pos + 16;
    }
}
