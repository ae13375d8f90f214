package kraft.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Reads one {@link ReadUnit} into a {@link RowSink}: Java's twin of
 * {@code kraft.spark.arrow_log.read_unit} (every check and error of {@code _read_unit_rows},
 * {@code _batch_problem} and {@code _fail_unless_torn}, with the same messages; positions are file
 * positions).
 *
 * <p>Integrity, as {@code FileLog} recovery judges it: every batch read is checked (header, length,
 * magic, CRC-32C, dense offsets from the unit's first offset, non-decreasing epochs), and a batch
 * that fails is a {@link LogReadException} naming the file, the byte position and the offset,
 * except for a torn tail: an invalid batch in the log's last segment with no CRC-valid batch after
 * it up to the planned file size, which ends the read there. A snapshot is never torn. A batch with
 * a valid CRC whose records do not parse is an error too. Batches outside the row filter's offsets
 * are checked but not decoded; nothing after the filter's end offset is read. Where the last unit
 * of a segment that is not the last ends before the next segment's first offset, the log is
 * missing data (an error).
 *
 * <p>The unit's bytes are read at the first {@link #next} into one array (reused by the next
 * reader of the thread once this one is finished); records are parsed straight from it.
 *
 * <p>Not thread-safe: one reader per task.
 */
public final class UnitReader implements AutoCloseable {
    /** Python's {@code _SPARE_MAX_BYTES}: a finished read's buffer is kept for the thread's next. */
    static final int SPARE_MAX_BYTES = 2 * 32 * 1024 * 1024;
    private static final ThreadLocal<byte[]> SPARE = new ThreadLocal<>();

    private final ReadUnit unit;
    private final RowFilter rf;
    private final Payloads payloads;
    private final boolean snapshot;
    private final long snapshotOffset;
    private final boolean byType;
    private final boolean allOffsets; // a snapshot's rows all carry one offset, or no offset filter
    private final boolean hasEnd;
    private final long endOffset;

    private final RecordBatches.Header h = new RecordBatches.Header();
    private final RecordBatches.RecordCursor cursor = new RecordBatches.RecordCursor();
    private final CRC32C crc = new CRC32C();
    private RecordBatches.Decompressor decompressor;

    private byte[] data;
    private int dataLen;
    private int pos;
    private long expected;
    private int lastEpoch;
    private boolean started;
    private boolean finished;
    private long emitted; // rows given to sinks

    public UnitReader(ReadUnit unit, RowFilter rf, Payloads payloads) {
        this.unit = unit;
        this.rf = rf;
        this.payloads = payloads;
        this.snapshot = unit.snapshotOffset != null;
        this.snapshotOffset = snapshot ? unit.snapshotOffset : 0;
        this.byType = rf.filtersRecordTypes();
        this.allOffsets = snapshot || !rf.filtersOffsets();
        this.hasEnd = rf.end() != null;
        this.endOffset = hasEnd ? rf.end() : 0;
        this.expected = unit.firstOffset;
        this.lastEpoch = unit.minEpoch;
    }

    /**
     * Reads whole log batches of the unit into {@code sink} until {@code sink.rows() >= batchRows}
     * after a batch, or the unit ends (a log batch is never split across two calls).
     *
     * <p>Returns true if this call added at least one row to the sink, or the unit is not
     * finished (call again); false when it added nothing and the unit is finished: every later
     * call returns false too. (So the call that reads the unit's last rows returns true, and the
     * next one false; a call may return true having added no row only when the sink already held
     * {@code batchRows} rows or more when it was called.) {@code batchRows} below 1 acts as 1.
     *
     * <p>The file is opened and read at the first call; a unit whose rows the filter excludes
     * as a whole (a snapshot at an offset it does not admit, an empty record-type list) is
     * finished without opening it, as Python's {@code read_unit}.
     *
     * @throws LogReadException corrupt or missing data, or the file is gone (the reader is then
     *     finished; the rows this call added to the sink are incomplete and are to be dropped)
     */
    public boolean next(RowSink sink, int batchRows) {
        if (finished) {
            return false;
        }
        long before = emitted;
        int want = Math.max(batchRows, 1);
        try {
            if (!started) {
                started = true;
                if ((snapshot && !rf.admitsOffset(snapshotOffset)) || rf.recordTypesEmpty()) {
                    finish();
                    return false;
                }
                load();
            }
            while (true) {
                if (pos >= dataLen) {
                    checkNothingMissing();
                    finish();
                    return emitted > before;
                }
                if (!step(sink)) { // a torn tail, or past the filter's end: the rest is not read
                    finish();
                    return emitted > before;
                }
                if (sink.rows() >= want) {
                    return true;
                }
            }
        } catch (RuntimeException | Error e) {
            finish();
            throw e;
        }
    }

    /** Releases the unit's bytes (the reader is then finished). */
    @Override
    public void close() {
        finish();
    }

    private void finish() {
        finished = true;
        byte[] buffer = data;
        data = null;
        dataLen = 0;
        if (buffer != null && buffer.length <= SPARE_MAX_BYTES && SPARE.get() == null) {
            SPARE.set(buffer);
        }
    }

    /** Python's {@code _unit_bytes}: bytes [start, end) of the file, fewer if it is now shorter. */
    private void load() {
        long size = Math.max(unit.end - unit.start, 0);
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException(unit.path + ": a read unit of " + size + " bytes is too large");
        }
        try (FileChannel ch = open(unit.path, unit.start)) {
            byte[] buffer = SPARE.get();
            SPARE.remove();
            if (buffer == null || buffer.length < size) {
                buffer = new byte[(int) size];
            }
            ByteBuffer view = ByteBuffer.wrap(buffer, 0, (int) size);
            int got = 0;
            while (got < size) {
                int n = ch.read(view, unit.start + got);
                if (n <= 0) {
                    break;
                }
                got += n;
            }
            data = buffer;
            dataLen = got;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static FileChannel open(String path, long start) throws IOException {
        try {
            return FileChannel.open(Path.of(path), StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new LogReadException(path + ": the file is gone (deleted after the read was planned, e.g. by "
                    + "snapshot cleanup)", path, start, -1);
        }
    }

    /** One batch at {@code pos}: checked, then decoded into the sink unless filtered; false: stop. */
    private boolean step(RowSink sink) {
        final byte[] b = data;
        final long filePos = unit.start + pos;
        String problem = null;
        boolean haveHeader;
        try {
            haveHeader = RecordBatches.readHeader(b, pos, dataLen, h);
            if (!haveHeader) {
                problem = "short batch header (" + (dataLen - pos) + " bytes before the end of the file)";
            }
        } catch (RecordBatches.CorruptRecordsException e) {
            haveHeader = false;
            problem = "invalid batch header: " + e.getMessage().replace("position " + pos, "position " + filePos);
        }
        if (problem == null) {
            if (pos + h.sizeInBytes() > dataLen) {
                problem = "batch length " + h.batchLength + " runs past the end of the file";
            } else if (!RecordBatches.crcValid(b, pos, dataLen, h, crc)) {
                problem = "CRC mismatch";
            } else if (h.baseOffset != expected) {
                problem = "batch has base offset " + h.baseOffset + ", expected " + expected;
            } else if (h.partitionLeaderEpoch < lastEpoch) {
                problem = "batch epoch " + h.partitionLeaderEpoch + " is below the previous " + lastEpoch;
            }
        }
        if (problem != null) {
            failUnlessTorn(filePos, haveHeader ? h.baseOffset : expected, problem);
            return false;
        }
        final int size = (int) h.sizeInBytes();
        final long base = h.baseOffset;
        final long next = h.nextOffset();
        final boolean control = h.isControl();
        if (!snapshot && hasEnd && base >= endOffset) {
            return false;
        }
        boolean skip = (control && byType) || (!allOffsets && !rf.mayContainRange(base, next));
        if (!skip) {
            decode(sink, filePos, size, base, next, control);
        }
        expected = next;
        lastEpoch = h.partitionLeaderEpoch;
        pos += size;
        return true;
    }

    private void decode(RowSink sink, long filePos, int size, long base, long next, boolean control) {
        if (h.recordsCount == 0) {
            return; // a batch of no records (one emptied by compaction) has none, whatever follows
        }
        byte[] body = data;
        int from = pos + RecordBatches.HEADER_SIZE;
        int to = pos + size;
        try {
            if (h.compression() != RecordBatches.NONE) {
                if (decompressor == null) {
                    decompressor = new RecordBatches.Decompressor();
                }
                decompressor.decompress(data, from, to, h, where(base));
                body = decompressor.buffer();
                from = 0;
                to = decompressor.length();
            }
        } catch (RecordBatches.CorruptRecordsException e) {
            throw corrupt(filePos, base, e.getMessage());
        }
        final RecordBatches.RecordCursor r = cursor;
        final boolean filterOffsets = !snapshot && !rf.covers(base, next);
        final int epoch = h.partitionLeaderEpoch;
        try {
            r.reset(body, from, to, h);
            while (r.next()) {
                if (filterOffsets && !rf.admitsOffset(r.offset)) {
                    continue;
                }
                long offset = snapshot ? snapshotOffset : r.offset;
                if (control) {
                    Payloads.Control c = payloads.control(body, r.keyOff, r.keyLen, body, r.valueOff, r.valueLen);
                    sink.row(offset, epoch, base, r.timestamp, true, c.controlType, null, -1,
                            body, r.keyOff, r.keyLen, body, r.valueOff, r.valueLen, c.payload);
                } else {
                    if (byType && !rf.admitsRecordType(Payloads.peekTypeName(body, r.valueOff, r.valueLen))) {
                        continue;
                    }
                    Payloads.Decoded d = payloads.metadata(body, r.valueOff, r.valueLen);
                    if (byType && !rf.admitsRecordType(d.recordType)) {
                        continue;
                    }
                    sink.row(offset, epoch, base, r.timestamp, false, null, d.recordType, d.recordVersion,
                            body, r.keyOff, r.keyLen, body, r.valueOff, r.valueLen, d.payload);
                }
                emitted++;
            }
        } catch (RecordBatches.CorruptRecordsException e) {
            throw corrupt(filePos, base, where(base) + ": " + e.getMessage());
        }
    }

    /** decode_batch's name for the batch at {@code pos} (a position in the unit's bytes, as Python's). */
    private String where(long base) {
        return "batch at offset " + base + " (position " + pos + ")";
    }

    private LogReadException corrupt(long filePos, long base, String problem) {
        return new LogReadException(unit.path + ": corrupt records in the batch at position " + filePos + " (offset "
                + base + "): " + problem, unit.path, filePos, base);
    }

    /** Python's {@code _fail_unless_torn}: throw for an invalid batch unless it is the torn tail of the last segment. */
    private void failUnlessTorn(long filePos, long offset, String problem) {
        String where = unit.path + ": invalid batch at position " + filePos + " (offset " + offset + "): " + problem;
        if (unit.kind == ReadUnit.Kind.SNAPSHOT) {
            throw new LogReadException(where + "; a published snapshot is never torn", unit.path, filePos, offset);
        }
        if (!unit.lastSegment) {
            throw new LogReadException(where + "; only the last segment can have a torn tail", unit.path, filePos,
                    offset);
        }
        long follower = validBatchAfter(filePos, expected);
        if (follower >= 0) {
            throw new LogReadException(where + "; a valid batch follows at position " + follower
                    + ", so this is not a torn tail", unit.path, filePos, offset);
        }
    }

    /**
     * File position of a CRC-valid batch at or after {@code nextOffset} anywhere after
     * {@code position} (up to the planned file size), or -1: the test {@code FileLog} recovery
     * applies before it calls an invalid batch a torn tail.
     */
    private long validBatchAfter(long position, long nextOffset) {
        long size = Math.max(unit.fileSize - position, 0);
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException(unit.path + ": " + size + " bytes to scan is too many");
        }
        byte[] buffer = new byte[(int) size];
        int got = 0;
        try (FileChannel ch = open(unit.path, position)) {
            ByteBuffer view = ByteBuffer.wrap(buffer);
            while (got < size) {
                int n = ch.read(view, position + got);
                if (n <= 0) {
                    break;
                }
                got += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int found = RecordBatches.findValidBatch(buffer, got, nextOffset);
        return found < 0 ? -1 : position + found;
    }

    /** The missing-data check at the end of the last unit of a segment that is not the log's last. */
    private void checkNothingMissing() {
        boolean missing = unit.endOffset != null && expected != unit.endOffset;
        if (missing && unit.kind == ReadUnit.Kind.SEGMENT && unit.end == unit.fileSize && !unit.lastSegment) {
            throw new LogReadException(unit.path + ": the segment ends before offset " + expected
                    + " but the next segment starts at offset " + unit.endOffset + ": the log is missing data",
                    unit.path, unit.start + pos, expected);
        }
    }
}
