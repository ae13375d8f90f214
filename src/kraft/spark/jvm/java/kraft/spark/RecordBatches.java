package kraft.spark;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

import com.github.luben.zstd.Zstd;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;
import com.github.luben.zstd.ZstdBufferDecompressingStreamNoFinalizer;

/**
 * RecordBatch v2 (magic 2) as {@code kraft.records.batch} reads it: the batch header, its CRC-32C,
 * the records of a batch, and decompression (gzip, lz4, zstd as Kafka writes them), with the same
 * checks and the same error messages.
 *
 * <p>Layout (big-endian): 0 baseOffset int64, 8 batchLength int32, 12 partitionLeaderEpoch int32,
 * 16 magic int8, 17 crc uint32 (CRC-32C of bytes 21..end), 21 attributes int16, 23
 * lastOffsetDelta int32, 27 baseTimestamp int64, 35 maxTimestamp int64, 43 producerId int64, 51
 * producerEpoch int16, 53 baseSequence int32, 57 recordsCount int32, 61 records.
 */
public final class RecordBatches {
    public static final int HEADER_SIZE = 61;
    public static final int LOG_OVERHEAD = 12;
    public static final int MAGIC = 2;
    public static final int MAGIC_OFFSET = 16;
    public static final int CRC_OFFSET = 17;
    public static final int ATTRIBUTES_OFFSET = 21;
    public static final int MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD;
    public static final int MIN_RECORD_SIZE = 7;
    public static final int COMPRESSION_MASK = 0x07;
    public static final int TIMESTAMP_TYPE_MASK = 0x08;
    public static final int CONTROL_FLAG = 0x20;
    /** Python's {@code DEFAULT_MAX_DECOMPRESSED_BYTES}. */
    public static final int MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

    static final int NONE = 0;
    static final int GZIP = 1;
    static final int SNAPPY = 2;
    static final int LZ4 = 3;
    static final int ZSTD = 4;

    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle SHORT_BE = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private RecordBatches() {
    }

    /** A batch (or its records) cannot be read: Python's {@code CorruptRecordError}, same message. */
    public static final class CorruptRecordsException extends Exception {
        private static final long serialVersionUID = 1L;

        CorruptRecordsException(String message) {
            super(message, null, false, false);
        }
    }

    static long getLong(byte[] b, int i) {
        return (long) LONG_BE.get(b, i);
    }

    static int getInt(byte[] b, int i) {
        return (int) INT_BE.get(b, i);
    }

    // ---------------------------------------------------------------------------------------------
    // The header

    /** The fixed 61-byte header of a batch (mutable: one is reused for every batch of a read). */
    public static final class Header {
        public long baseOffset;
        public int batchLength;
        public int partitionLeaderEpoch;
        public int magic;
        public long crc;
        public int attributes;
        public int lastOffsetDelta;
        public long baseTimestamp;
        public long maxTimestamp;
        public long producerId;
        public int producerEpoch;
        public int baseSequence;
        public int recordsCount;

        /** batchLength + 12 (a long: the length field is untrusted). */
        public long sizeInBytes() {
            return batchLength + (long) LOG_OVERHEAD;
        }

        public long nextOffset() {
            return baseOffset + lastOffsetDelta + 1;
        }

        public boolean isControl() {
            return (attributes & CONTROL_FLAG) != 0;
        }

        public int compression() {
            return attributes & COMPRESSION_MASK;
        }

        /** Timestamp type LogAppendTime: every record carries maxTimestamp. */
        public boolean logAppendTime() {
            return (attributes & TIMESTAMP_TYPE_MASK) != 0;
        }
    }

    /**
     * {@code read_batch_header}: parse the header of the batch at {@code pos} of {@code b[0, limit)}
     * into {@code h}; false (nothing parsed) if fewer than 61 bytes remain.
     *
     * @throws CorruptRecordsException magic is not 2, batchLength is below the header size, or the
     *     record count or last offset delta is negative (naming {@code pos})
     */
    public static boolean readHeader(byte[] b, int pos, int limit, Header h) throws CorruptRecordsException {
        if (pos < 0 || limit - pos < HEADER_SIZE) {
            return false;
        }
        h.baseOffset = getLong(b, pos);
        h.batchLength = getInt(b, pos + 8);
        h.partitionLeaderEpoch = getInt(b, pos + 12);
        h.magic = b[pos + MAGIC_OFFSET];
        h.crc = getInt(b, pos + CRC_OFFSET) & 0xFFFFFFFFL;
        h.attributes = (short) SHORT_BE.get(b, pos + ATTRIBUTES_OFFSET);
        h.lastOffsetDelta = getInt(b, pos + 23);
        h.baseTimestamp = getLong(b, pos + 27);
        h.maxTimestamp = getLong(b, pos + 35);
        h.producerId = getLong(b, pos + 43);
        h.producerEpoch = (short) SHORT_BE.get(b, pos + 51);
        h.baseSequence = getInt(b, pos + 53);
        h.recordsCount = getInt(b, pos + 57);
        if (h.magic != MAGIC) {
            throw new CorruptRecordsException("batch at position " + pos + " has magic " + h.magic
                    + "; only magic 2 (RecordBatch v2) is supported");
        }
        if (h.batchLength < MIN_BATCH_LENGTH) {
            throw new CorruptRecordsException("batch at position " + pos + " has impossible length " + h.batchLength
                    + " (a v2 batch is at least " + MIN_BATCH_LENGTH + " bytes after the length field)");
        }
        if (h.lastOffsetDelta < 0 || h.recordsCount < 0) {
            throw new CorruptRecordsException("batch at position " + pos + " has a negative record count ("
                    + h.recordsCount + ") or last offset delta (" + h.lastOffsetDelta + ")");
        }
        return true;
    }

    /** {@code batch_crc_valid}: whether the stored CRC matches bytes 21..end of the batch at {@code pos}. */
    public static boolean crcValid(byte[] b, int pos, int limit, Header h, CRC32C crc) {
        long end = pos + h.sizeInBytes();
        if (h.batchLength < MIN_BATCH_LENGTH || end > limit) {
            return false;
        }
        crc.reset();
        crc.update(b, pos + ATTRIBUTES_OFFSET, (int) end - pos - ATTRIBUTES_OFFSET);
        return crc.getValue() == h.crc;
    }

    /**
     * {@code find_valid_batch}: position in {@code data[0, len)} of the first CRC-valid batch after
     * position 0 whose base offset is at least {@code minBaseOffset} and which lies wholly in the
     * data, or -1.
     */
    public static int findValidBatch(byte[] data, int len, long minBaseOffset) {
        Header h = new Header();
        CRC32C crc = new CRC32C();
        for (int at = indexOf(data, len, (byte) MAGIC, MAGIC_OFFSET + 1); at != -1;
             at = indexOf(data, len, (byte) MAGIC, at + 1)) {
            int start = at - MAGIC_OFFSET;
            boolean ok;
            try {
                ok = readHeader(data, start, len, h);
            } catch (CorruptRecordsException e) {
                ok = false;
            }
            if (ok && h.baseOffset >= minBaseOffset && start + h.sizeInBytes() <= len && crcValid(data, start, len, h, crc)) {
                return start;
            }
        }
        return -1;
    }

    private static int indexOf(byte[] b, int len, byte value, int from) {
        for (int i = Math.max(from, 0); i < len; i++) {
            if (b[i] == value) {
                return i;
            }
        }
        return -1;
    }

    // ---------------------------------------------------------------------------------------------
    // Records

    /**
     * The records of an uncompressed (or decompressed) body, one at a time, parsed as
     * {@code kraft.records.batch._decode_records_checked} parses them (same checks, same
     * messages; positions are body positions). No object per record: the fields of the current
     * record are this cursor's.
     */
    public static final class RecordCursor {
        private byte[] b;
        private int start;
        private int end;
        private int p;
        private int index;
        private int count;
        private long baseOffset;
        private long baseTimestamp;
        private boolean logAppendTime;
        private long maxTimestamp;

        public long offset;
        public long timestamp;
        public int attributes;
        public int keyOff;
        public int keyLen; // -1: null
        public int valueOff;
        public int valueLen; // -1: null

        /** Start on the body {@code b[start, end)} of the batch whose header is {@code h}. */
        public void reset(byte[] b, int start, int end, Header h) throws CorruptRecordsException {
            int n = end - start;
            if (h.recordsCount > n / MIN_RECORD_SIZE) {
                throw new CorruptRecordsException("batch claims " + h.recordsCount + " records but its " + n
                        + " record bytes can hold at most " + n / MIN_RECORD_SIZE);
            }
            this.b = b;
            this.start = start;
            this.end = end;
            this.p = start;
            this.index = 0;
            this.count = h.recordsCount;
            this.baseOffset = h.baseOffset;
            this.baseTimestamp = h.baseTimestamp;
            this.logAppendTime = h.logAppendTime();
            this.maxTimestamp = h.maxTimestamp;
        }

        /** Parse the next record; false when all {@code recordsCount} were read (and nothing follows). */
        public boolean next() throws CorruptRecordsException {
            if (index == count) {
                if (p != end) {
                    throw new CorruptRecordsException((end - p) + " bytes follow the last of the batch's " + count
                            + " records");
                }
                return false;
            }
            int i = index;
            int length = varint(end, "record length");
            if (length < 0 || length > end - p) {
                throw new CorruptRecordsException("record " + i + " claims " + length + " bytes but " + (end - p)
                        + " are left in the batch");
            }
            int recEnd = p + length;
            if (recEnd - p < 1) {
                throw truncated("record attributes", 1, recEnd);
            }
            attributes = b[p++];
            long tsDelta = varlong(recEnd, "record timestampDelta");
            int offsetDelta = varint(recEnd, "record offsetDelta");
            int klen = varint(recEnd, "record key length");
            if (klen < 0) {
                keyOff = 0;
                keyLen = -1;
            } else {
                if (klen > recEnd - p) {
                    throw truncated("record key", klen, recEnd);
                }
                keyOff = p;
                keyLen = klen;
                p += klen;
            }
            int vlen = varint(recEnd, "record value length");
            if (vlen < 0) {
                valueOff = 0;
                valueLen = -1;
            } else {
                if (vlen > recEnd - p) {
                    throw truncated("record value", vlen, recEnd);
                }
                valueOff = p;
                valueLen = vlen;
                p += vlen;
            }
            int hcount = varint(recEnd, "record header count");
            if (hcount < 0 || hcount > (recEnd - p) / 2) {
                throw new CorruptRecordsException("record " + i + " has invalid header count " + hcount);
            }
            for (int k = 0; k < hcount; k++) {
                int hk = varint(recEnd, "header key length");
                if (hk < 0) {
                    throw new CorruptRecordsException("record " + i + " has a header with negative key length " + hk);
                }
                if (hk > recEnd - p) {
                    throw truncated("header key", hk, recEnd);
                }
                p += hk;
                int hv = varint(recEnd, "header value length");
                if (hv >= 0) {
                    if (hv > recEnd - p) {
                        throw truncated("header value", hv, recEnd);
                    }
                    p += hv;
                }
            }
            if (p != recEnd) {
                throw new CorruptRecordsException("record " + i + " has " + (recEnd - p) + " bytes after its headers");
            }
            offset = baseOffset + offsetDelta;
            timestamp = logAppendTime ? maxTimestamp : baseTimestamp + tsDelta;
            index = i + 1;
            return true;
        }

        private CorruptRecordsException truncated(String what, int n, int limit) {
            return new CorruptRecordsException("truncated " + what + ": needs " + n + " bytes at position " + (p - start)
                    + ", " + (limit - p) + " left");
        }

        /** Reader.varint: a zigzag varint of at most 5 bytes whose value fits 32 bits. */
        private int varint(int limit, String what) throws CorruptRecordsException {
            int pos = p;
            if (pos < limit) {
                int x = b[pos];
                if (x >= 0) {
                    p = pos + 1;
                    return (x >>> 1) ^ -(x & 1);
                }
            }
            long value = 0;
            int shift = 0;
            for (int k = 0; k < 5; k++) {
                if (pos >= limit) {
                    throw new CorruptRecordsException("truncated " + what + ": varint runs past the end at position "
                            + (pos - start));
                }
                int x = b[pos++] & 0xFF;
                value |= (long) (x & 0x7F) << shift;
                if ((x & 0x80) == 0) {
                    p = pos;
                    if ((value >>> 32) != 0) {
                        throw new CorruptRecordsException("invalid " + what + ": value does not fit 32 bits");
                    }
                    int u = (int) value;
                    return (u >>> 1) ^ -(u & 1);
                }
                shift += 7;
            }
            throw new CorruptRecordsException("invalid " + what + ": varint longer than 5 bytes");
        }

        /** Reader.varlong: a zigzag varint of at most 10 bytes whose value fits 64 bits. */
        private long varlong(int limit, String what) throws CorruptRecordsException {
            int pos = p;
            if (pos < limit) {
                int x = b[pos];
                if (x >= 0) {
                    p = pos + 1;
                    return (x >>> 1) ^ -(x & 1);
                }
            }
            long value = 0;
            int shift = 0;
            for (int k = 0; k < 10; k++) {
                if (pos >= limit) {
                    throw new CorruptRecordsException("truncated " + what + ": varint runs past the end at position "
                            + (pos - start));
                }
                int x = b[pos++] & 0xFF;
                if (k < 9) {
                    value |= (long) (x & 0x7F) << shift;
                } else {
                    value |= (long) (x & 0x01) << 63;
                }
                if ((x & 0x80) == 0) {
                    p = pos;
                    if (k == 9 && (x & 0x7F) > 1) {
                        throw new CorruptRecordsException("invalid " + what + ": value does not fit 64 bits");
                    }
                    return (value >>> 1) ^ -(value & 1);
                }
                shift += 7;
            }
            throw new CorruptRecordsException("invalid " + what + ": varint longer than 10 bytes");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Decompression

    /**
     * {@code decompress_records}: the records of compressed batches, decompressed into a buffer
     * this object reuses ({@link #buffer()}, valid up to {@link #length()} until the next call).
     *
     * <p>Snappy is refused as Python refuses it. gzip is parsed as zlib's inflate (wbits 16+15)
     * parses it, with java.util.zip's zlib for the deflate data (same messages); lz4 frames and
     * blocks are decoded here (XXH32 checksums by lz4-java); zstd goes
     * through zstd-jni's libzstd driven as python-zstandard drives it, which needs the whole
     * room of Python's read as output: the buffer grows to 64 MiB + 1 at the first zstd batch
     * (KRaft itself never compresses its log).
     */
    public static final class Decompressor {
        private byte[] out = new byte[64 * 1024];
        private int len;
        private final int limit;
        private Inflater inflater;

        public Decompressor() {
            this(MAX_DECOMPRESSED_BYTES);
        }

        Decompressor(int limit) {
            this.limit = limit;
        }

        public byte[] buffer() {
            return out;
        }

        public int length() {
            return len;
        }

        /**
         * Decompress the records {@code data[from, to)} of the batch whose header is {@code h};
         * {@code where} names the batch in errors ("batch at offset B (position P)").
         *
         * @throws CorruptRecordsException as Python's {@code _decompress}: its own messages for a
         *     truncated stream, too many bytes, snappy and unknown codecs; "cannot decompress
         *     {codec} records: ..." for what the codec library refuses
         */
        public void decompress(byte[] data, int from, int to, Header h, String where) throws CorruptRecordsException {
            int codec = h.compression();
            len = 0;
            if (codec == SNAPPY) {
                throw new CorruptRecordsException(where + " is snappy-compressed, which kraft cannot read (KRaft never "
                        + "writes snappy; use Kafka's kafka-dump-log for such segments)");
            }
            String name;
            switch (codec) {
                case GZIP: name = "gzip"; break;
                case LZ4: name = "lz4"; break;
                case ZSTD: name = "zstd"; break;
                default:
                    throw new CorruptRecordsException(where + " uses unknown compression codec " + codec);
            }
            try {
                switch (codec) {
                    case GZIP:
                        gzip(data, from, to);
                        break;
                    case LZ4:
                        lz4(data, from, to);
                        break;
                    default:
                        zstd(data, from, to);
                }
            } catch (CorruptRecordsException e) {
                throw new CorruptRecordsException(where + ": " + e.getMessage());
            } catch (LibraryError e) {
                throw new CorruptRecordsException(where + ": cannot decompress " + name + " records: " + e.getMessage());
            }
        }

        private CorruptRecordsException tooLarge(String what) {
            return new CorruptRecordsException(what + " records decompress to more than " + limit + " bytes");
        }

        private void ensure(long capacity) {
            if (capacity > out.length) {
                long n = Math.max(capacity, Math.min((long) out.length * 2, (long) limit + 1 + (4 << 20)));
                out = java.util.Arrays.copyOf(out, (int) Math.min(n, Integer.MAX_VALUE - 16));
            }
        }

        // --- gzip: zlib's inflate with wbits=16+15, one member at a time (as Python's zlib) ---

        private void gzip(byte[] d, int from, int to) throws CorruptRecordsException, LibraryError {
            int p = from;
            while (true) {
                p = gzipMember(d, p, to);
                if (p == to) {
                    return;
                }
            }
        }

        /** One member from {@code p}; the position after it. */
        private int gzipMember(byte[] d, int p, int to) throws CorruptRecordsException, LibraryError {
            CRC32 headerCrc = new CRC32();
            int q = p;
            if (to - q < 2) {
                throw truncatedGzip();
            }
            if ((d[q] & 0xFF) != 0x1f || (d[q + 1] & 0xFF) != 0x8b) {
                throw zlibError("incorrect header check");
            }
            q += 2;
            if (to - q < 2) {
                throw truncatedGzip();
            }
            int method = d[q] & 0xFF;
            int flags = d[q + 1] & 0xFF;
            if (method != 8) {
                throw zlibError("unknown compression method");
            }
            if ((flags & 0xe0) != 0) {
                throw zlibError("unknown header flags set");
            }
            q += 2;
            if (to - q < 6) { // MTIME, XFL, OS
                throw truncatedGzip();
            }
            q += 6;
            if ((flags & 0x04) != 0) { // FEXTRA
                if (to - q < 2) {
                    throw truncatedGzip();
                }
                int xlen = (d[q] & 0xFF) | (d[q + 1] & 0xFF) << 8;
                q += 2;
                if (to - q < xlen) {
                    throw truncatedGzip();
                }
                q += xlen;
            }
            for (int bit : new int[] {0x08, 0x10}) { // FNAME, FCOMMENT: zero-terminated
                if ((flags & bit) != 0) {
                    while (q < to && d[q] != 0) {
                        q++;
                    }
                    if (q >= to) {
                        throw truncatedGzip();
                    }
                    q++;
                }
            }
            if ((flags & 0x02) != 0) { // FHCRC
                if (to - q < 2) {
                    throw truncatedGzip();
                }
                headerCrc.update(d, p, q - p);
                int stored = (d[q] & 0xFF) | (d[q + 1] & 0xFF) << 8;
                if (stored != (int) (headerCrc.getValue() & 0xFFFF)) {
                    throw zlibError("header crc mismatch");
                }
                q += 2;
            }
            if (inflater == null) {
                inflater = new Inflater(true);
            }
            Inflater inf = inflater;
            inf.reset();
            inf.setInput(d, q, to - q);
            int memberStart = len;
            long cap = (long) limit + 1 - len; // Python: max_length = limit + 1 - len(out)
            try {
                while (!inf.finished()) {
                    long room = cap - (len - memberStart);
                    if (room <= 0) {
                        break;
                    }
                    ensure(len + Math.min(room, 1 << 16));
                    int n = inf.inflate(out, len, (int) Math.min(room, out.length - len));
                    len += n;
                    if (n == 0) {
                        break; // zlib can go no further: it needs input (or the stream ended)
                    }
                }
            } catch (DataFormatException e) {
                throw zlibError(e.getMessage());
            }
            if (len > limit) {
                throw tooLarge("gzip");
            }
            if (!inf.finished()) {
                throw truncatedGzip();
            }
            q = to - inf.getRemaining();
            CRC32 crc = new CRC32();
            crc.update(out, memberStart, len - memberStart);
            if (to - q < 4) {
                throw truncatedGzip();
            }
            if ((int) INT_LE.get(d, q) != (int) crc.getValue()) {
                throw zlibError("incorrect data check");
            }
            q += 4;
            if (to - q < 4) {
                throw truncatedGzip();
            }
            if ((int) INT_LE.get(d, q) != len - memberStart) {
                throw zlibError("incorrect length check");
            }
            return q + 4;
        }

        private static CorruptRecordsException truncatedGzip() {
            return new CorruptRecordsException("gzip stream is truncated");
        }

        private static LibraryError zlibError(String msg) {
            return new LibraryError("Error -3 while decompressing data: " + msg);
        }

        // --- lz4: the LZ4 frame format (magic, descriptor, blocks, end mark, optional checksums) ---

        private void lz4(byte[] d, int from, int to) throws CorruptRecordsException, LibraryError {
            int p = from;
            while (true) {
                long cap = (long) limit + 1 - len; // Python: max_length = limit + 1 - len(out)
                int next = lz4Frame(d, p, to, cap);
                if (len > limit) {
                    throw tooLarge("lz4");
                }
                if (next < 0) {
                    throw new CorruptRecordsException("lz4 frame is truncated");
                }
                p = next;
                if (p == to) {
                    return;
                }
            }
        }

        private static LibraryError lz4Error(String name) {
            return new LibraryError("LZ4F_decompress failed with code: ERROR_" + name);
        }

        /**
         * One frame at {@code p}: appends its output; the position after it, or -1 if the input
         * ends first (or the output reached {@code cap}: the caller sees the size).
         */
        private int lz4Frame(byte[] d, int p, int to, long cap) throws LibraryError {
            int frameStart = len;
            int avail = to - p;
            if (avail < 7) {
                return -1;
            }
            int magic = (int) INT_LE.get(d, p);
            if ((magic & 0xFFFFFFF0) == 0x184D2A50) { // skippable frame
                if (avail < 8) {
                    return -1;
                }
                long size = (int) INT_LE.get(d, p + 4) & 0xFFFFFFFFL;
                if (avail - 8 < size) {
                    return -1;
                }
                return (int) (p + 8 + size);
            }
            if (magic != 0x184D2204) {
                throw lz4Error("frameType_unknown");
            }
            int flg = d[p + 4] & 0xFF;
            boolean blockChecksum = ((flg >> 4) & 1) != 0;
            boolean linked = ((flg >> 5) & 1) == 0;
            boolean contentSizeFlag = ((flg >> 3) & 1) != 0;
            boolean contentChecksum = ((flg >> 2) & 1) != 0;
            boolean dictIdFlag = (flg & 1) != 0;
            if (((flg >> 1) & 1) != 0) {
                throw lz4Error("reservedFlag_set");
            }
            if (((flg >> 6) & 3) != 1) {
                throw lz4Error("headerVersion_wrong");
            }
            int fhs = 7 + (contentSizeFlag ? 8 : 0) + (dictIdFlag ? 4 : 0);
            if (avail < fhs) {
                return -1;
            }
            int bd = d[p + 5] & 0xFF;
            int blockSizeId = (bd >> 4) & 7;
            if (((bd >> 7) & 1) != 0) {
                throw lz4Error("reservedFlag_set");
            }
            if (blockSizeId < 4) {
                throw lz4Error("maxBlockSize_invalid");
            }
            if ((bd & 0x0F) != 0) {
                throw lz4Error("reservedFlag_set");
            }
            if (((xxh32(d, p + 4, fhs - 5, 0) >>> 8) & 0xFF) != (d[p + fhs - 1] & 0xFF)) {
                throw lz4Error("headerChecksum_invalid");
            }
            int maxBlockSize = 1 << (8 + 2 * blockSizeId); // 4: 64 KB, 5: 256 KB, 6: 1 MB, 7: 4 MB
            long contentSize = contentSizeFlag ? (long) LONG_LE.get(d, p + 6) : 0;
            int q = p + fhs;
            while (true) {
                if (to - q < 4) {
                    return -1;
                }
                int blockHeader = (int) INT_LE.get(d, q);
                q += 4;
                if (blockHeader == 0) {
                    break; // end mark
                }
                int size = blockHeader & 0x7FFFFFFF;
                if (size > maxBlockSize) {
                    throw lz4Error("maxBlockSize_invalid");
                }
                if (blockHeader < 0) { // uncompressed block
                    int n = Math.min(size, to - q);
                    ensure(len + (long) n);
                    System.arraycopy(d, q, out, len, n);
                    len += n;
                    q += n;
                    if (len - frameStart >= cap) {
                        return -1;
                    }
                    if (n < size) {
                        return -1;
                    }
                    if (blockChecksum) {
                        if (to - q < 4) {
                            return -1;
                        }
                        if ((int) INT_LE.get(d, q) != xxh32(d, q - size, size, 0)) {
                            throw lz4Error("blockChecksum_invalid");
                        }
                        q += 4;
                    }
                    continue;
                }
                int target = size + (blockChecksum ? 4 : 0);
                if (to - q < target) {
                    return -1;
                }
                if (blockChecksum && (int) INT_LE.get(d, q + size) != xxh32(d, q, size, 0)) {
                    throw lz4Error("blockChecksum_invalid");
                }
                // The dictionary of a linked block: everything this frame has produced so far,
                // in front of the block in the output (LZ4F's prefix mode).
                int prefix = linked ? len - frameStart : 0;
                int lowPrefix = prefix >= 65535 ? -1 : len - prefix;
                ensure(len + (long) maxBlockSize);
                int n = lz4Block(d, q, size, out, len, maxBlockSize, lowPrefix);
                if (n < 0) {
                    throw lz4Error("decompressionFailed");
                }
                len += n;
                q += target;
                if (len - frameStart >= cap) {
                    return -1;
                }
            }
            if (contentSizeFlag && contentSize != 0 && contentSize != (long) (len - frameStart)) {
                throw lz4Error("frameSize_wrong");
            }
            if (contentChecksum) {
                if (to - q < 4) {
                    return -1;
                }
                if ((int) INT_LE.get(d, q) != xxh32(out, frameStart, len - frameStart, 0)) {
                    throw lz4Error("contentChecksum_invalid");
                }
                q += 4;
            }
            return q;
        }

        // --- zstd: as Python's zstandard reads it (the same libzstd, driven the same way) ---

        /**
         * Python's {@code _decompress_zstd}: first a read across frames of at most limit + 1
         * bytes (python-zstandard's stream reader: input in chunks of ZSTD_DStreamInSize, the
         * whole remaining room as output, which decides libzstd's single-pass shortcut and so its
         * error for some corrupt frames), then "truncated" unless the last frame ended. The
         * python-zstandard build reads no legacy (v0.x) frames, zstd-jni's does: a legacy magic
         * number where a frame starts is "Unknown frame descriptor", as Python sees it.
         */
        private void zstd(byte[] d, int from, int to) throws CorruptRecordsException, LibraryError {
            int stop = to;
            boolean legacy = false;
            for (int p = from; p < to; ) {
                if (to - p >= 4 && isLegacyZstdMagic((int) INT_LE.get(d, p))) {
                    stop = p;
                    legacy = true;
                    break;
                }
                long size;
                try {
                    size = Zstd.findFrameCompressedSize(d, p, to - p);
                } catch (RuntimeException e) { // ZstdException: not a frame libzstd can size
                    break;
                }
                if (Zstd.isError(size) || size <= 0) {
                    break;
                }
                p += (int) size;
            }
            if (legacy && stop == from) {
                throw new LibraryError("zstd decompress error: Unknown frame descriptor");
            }
            ensure((long) limit + 1);
            ByteBuffer target = ByteBuffer.wrap(out, 0, limit + 1);
            boolean unfinished;
            try (ChunkedZstdStream stream = new ChunkedZstdStream(d, from, stop)) {
                while (true) {
                    int outBefore = target.position();
                    long inBefore = stream.consumed();
                    stream.read(target);
                    if (!stream.hasRemaining() || !target.hasRemaining()) {
                        break;
                    }
                    if (target.position() == outBefore && stream.consumed() == inBefore) {
                        break; // the input ended inside a frame
                    }
                }
                unfinished = stream.hasRemaining();
            } catch (IOException e) {
                throw new LibraryError("zstd decompress error: " + e.getMessage());
            }
            len = target.position();
            if (len > limit) {
                throw tooLarge("zstd");
            }
            if (unfinished) {
                throw new CorruptRecordsException("zstd frame is truncated");
            }
            if (legacy) {
                throw new LibraryError("zstd decompress error: Unknown frame descriptor");
            }
        }
    }

    /** The magic numbers of zstd's legacy formats v0.1 to v0.7, as ZSTD_isLegacy knows them. */
    private static boolean isLegacyZstdMagic(int le32) {
        return le32 == 0xFD2FB51E || (le32 >= 0xFD2FB522 && le32 <= 0xFD2FB527);
    }

    /** zstd-jni's heap-buffer stream, fed [from, to) in chunks of ZSTD_DStreamInSize (as python-zstandard reads). */
    private static final class ChunkedZstdStream extends ZstdBufferDecompressingStreamNoFinalizer {
        private static final int CHUNK = 131075; // ZSTD_DStreamInSize = ZSTD_BLOCKSIZE_MAX + 3
        private final byte[] data;
        private final int to;
        private int next; // where the next chunk starts

        ChunkedZstdStream(byte[] data, int from, int to) {
            super(ByteBuffer.wrap(data, from, Math.min(CHUNK, to - from)).slice());
            this.data = data;
            this.to = to;
            this.next = from + Math.min(CHUNK, to - from);
        }

        @Override
        protected ByteBuffer refill(ByteBuffer old) {
            if (next >= to) {
                return old;
            }
            int n = Math.min(CHUNK, to - next);
            ByteBuffer chunk = ByteBuffer.wrap(data, next, n).slice();
            next += n;
            return chunk;
        }

        /** Input bytes consumed so far (for progress checks). */
        long consumed() {
            return next - (source == null ? 0 : source.remaining());
        }
    }

    /** What a codec library refuses (Python wraps it as "cannot decompress {codec} records: ..."). */
    static final class LibraryError extends Exception {
        private static final long serialVersionUID = 1L;

        LibraryError(String message) {
            super(message, null, false, false);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // LZ4 blocks (the LZ4 block format: sequences of a token, literals, a 2-byte offset and a match)

    private static final int MIN_MATCH = 4;
    private static final int LAST_LITERALS = 5; // the last 5 bytes of a block are always literals
    private static final int MF_LIMIT = 12; // and its last match starts at least 12 bytes before its end
    private static final XXHash32 XXH32 = XXHashFactory.fastestJavaInstance().hash32();

    /**
     * One LZ4 block {@code s[src, src + srcSize)} decoded into {@code d} at {@code dst} (room for
     * {@code outputSize} bytes): the decoded size, or -1 if the block is malformed. A match may
     * reach back to {@code lowPrefix} (the block's own start, or in a linked frame the frame's
     * earlier output in front of it); -1: anywhere. lz4-java's decoders take no such prefix,
     * hence this one. It refuses what liblz4 (python-lz4's) refuses on the inputs the tests
     * pin: a sequence that is not the last ending within the last 12 bytes of the output or
     * 8 of the input, a last sequence that does not end the input, a match into the last 5 bytes,
     * a match before the prefix; a match of offset 0 gives zeros, as liblz4's does.
     */
    static int lz4Block(byte[] s, int src, int srcSize, byte[] d, int dst, int outputSize, int lowPrefix) {
        if (outputSize == 0) {
            return (srcSize == 1 && s[src] == 0) ? 0 : -1;
        }
        if (srcSize == 0) {
            return -1;
        }
        final int iend = src + srcSize;
        final int oend = dst + outputSize;
        int ip = src;
        int op = dst;
        while (true) {
            int token = s[ip++] & 0xFF;
            long literals = token >>> 4;
            if (literals == 15) {
                int b;
                do {
                    if (ip >= iend) {
                        return -1;
                    }
                    b = s[ip++] & 0xFF;
                    literals += b;
                } while (b == 255);
            }
            long literalsEnd = op + literals;
            if (literalsEnd > oend - MF_LIMIT || ip + literals > iend - (2 + 1 + LAST_LITERALS)) {
                // Only the last sequence may come this close to either end, and it ends the block.
                if (ip + literals != iend || literalsEnd > oend) {
                    return -1;
                }
                System.arraycopy(s, ip, d, op, (int) literals);
                return (int) literalsEnd - dst;
            }
            System.arraycopy(s, ip, d, op, (int) literals);
            ip += (int) literals;
            op = (int) literalsEnd;
            int offset = (s[ip] & 0xFF) | (s[ip + 1] & 0xFF) << 8;
            ip += 2;
            long match = (long) op - offset;
            if (lowPrefix >= 0 && match < lowPrefix) {
                return -1;
            }
            long length = token & 15;
            if (length == 15) {
                int b;
                do {
                    if (ip > iend - LAST_LITERALS) {
                        return -1;
                    }
                    b = s[ip++] & 0xFF;
                    length += b;
                } while (b == 255);
            }
            length += MIN_MATCH;
            if (op + length > oend - LAST_LITERALS) {
                return -1;
            }
            if (offset == 0) {
                java.util.Arrays.fill(d, op, op + (int) length, (byte) 0);
            } else {
                for (int i = 0; i < length; i++) { // byte by byte: a match may overlap its own output
                    d[op + i] = d[(int) match + i];
                }
            }
            op += (int) length;
        }
    }

    /** XXH32, as the LZ4 frame format checksums headers, blocks and content. */
    static int xxh32(byte[] b, int off, int len, int seed) {
        return XXH32.hash(b, off, len, seed);
    }
}
