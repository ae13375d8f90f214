package kraft.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Plans the read units of a log: Java's twin of {@code kraft.spark.arrow_log.plan_units} (same
 * units, same order, same splitting at batch boundaries, same errors).
 */
public final class LogPlanner {
    /** Python's {@code DEFAULT_MAX_BYTES_PER_UNIT}. */
    public static final long DEFAULT_MAX_BYTES_PER_UNIT = 32L * 1024 * 1024;

    private static final int LAST_OFFSET_DELTA_POSITION = 23;

    private LogPlanner() {
    }

    /**
     * The read units of {@code path} (see {@link LogFiles#locate}) that {@code rf} may keep rows
     * of: snapshots first (oldest first, only with {@code includeSnapshots} or when the path is
     * the snapshot file), then segments by offset; a file larger than {@code maxBytesPerUnit} is
     * split into several units at batch boundaries.
     *
     * @throws IllegalArgumentException see {@link LogFiles#locate}; also {@code maxBytesPerUnit}
     *     not positive (Python's ValueError, same message)
     * @throws LogReadException a file vanished while planning
     */
    public static List<ReadUnit> plan(String path, boolean includeSnapshots, long maxBytesPerUnit, RowFilter rf) {
        if (maxBytesPerUnit <= 0) {
            throw new IllegalArgumentException("max_bytes_per_unit must be positive, got " + maxBytesPerUnit);
        }
        return plan(LogFiles.locate(path), includeSnapshots, maxBytesPerUnit, rf);
    }

    /** {@link #plan(String, boolean, long, RowFilter)} over files already located. */
    public static List<ReadUnit> plan(LogFiles files, boolean includeSnapshots, long maxBytesPerUnit, RowFilter rf) {
        if (maxBytesPerUnit <= 0) {
            throw new IllegalArgumentException("max_bytes_per_unit must be positive, got " + maxBytesPerUnit);
        }
        List<ReadUnit> units = new ArrayList<>();
        if (includeSnapshots || files.singleFile) {
            for (LogFiles.Snapshot snap : files.snapshots) {
                if (!rf.admitsOffset(snap.endOffset - 1)) {
                    continue;
                }
                units.addAll(fileUnits(snap.path, ReadUnit.Kind.SNAPSHOT, 0, null, maxBytesPerUnit, false, files.node,
                        snap.endOffset - 1));
            }
        }
        for (int i = 0; i < files.segments.size(); i++) {
            LogFiles.Segment seg = files.segments.get(i);
            Long nextBase = i + 1 < files.segments.size() ? Long.valueOf(files.segments.get(i + 1).baseOffset) : null;
            boolean last = seg.path.equals(files.lastSegment);
            if (nextBase == null && !last) {
                // One segment given alone: its end is where the next one in its directory begins.
                for (LogFiles.Segment sibling : LogFiles.listDir(LogFiles.parent(Paths.get(seg.path))).segments) {
                    if (sibling.baseOffset > seg.baseOffset) {
                        nextBase = sibling.baseOffset;
                        break;
                    }
                }
            }
            if (!rf.mayContain(seg.baseOffset, nextBase)) {
                continue;
            }
            for (ReadUnit u : fileUnits(seg.path, ReadUnit.Kind.SEGMENT, seg.baseOffset, nextBase, maxBytesPerUnit, last,
                    files.node, null)) {
                if (u.mayContain(rf)) {
                    units.add(u);
                }
            }
        }
        return units;
    }

    private static List<ReadUnit> fileUnits(String path, ReadUnit.Kind kind, long firstOffset, Long endOffset,
                                            long maxBytes, boolean lastSegment, Integer node, Long snapshotOffset) {
        long size;
        try {
            size = Files.size(Paths.get(path));
        } catch (NoSuchFileException e) {
            throw new LogReadException(path + ": the file is gone (deleted while planning the read)", path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<ReadUnit> units = new ArrayList<>();
        if (size == 0) {
            return units;
        }
        List<long[]> starts = new ArrayList<>(); // (position, expected base offset, previous epoch)
        starts.add(new long[] {0, firstOffset, -1});
        if (size > maxBytes) {
            starts.addAll(splitPoints(path, size, maxBytes, firstOffset));
        }
        for (int i = 0; i < starts.size(); i++) {
            boolean last = i + 1 == starts.size();
            long[] s = starts.get(i);
            units.add(new ReadUnit(path, kind, s[0], last ? size : starts.get(i + 1)[0], s[1],
                    last ? endOffset : Long.valueOf(starts.get(i + 1)[1]), (int) s[2], size, lastSegment, node,
                    snapshotOffset));
        }
        return units;
    }

    /**
     * (position, expected base offset, previous epoch) of each batch where a new unit starts:
     * walks the batch prefixes of the file; stops at the first one that is not a whole batch of a
     * sane length (what lies beyond is left to the reader of the last unit to judge).
     */
    static List<long[]> splitPoints(String path, long size, long maxBytes, long firstOffset) {
        List<long[]> points = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
            size = Math.min(size, ch.size());
            ByteBuffer window = ByteBuffer.allocate(1 << 20).order(ByteOrder.BIG_ENDIAN);
            long windowStart = 0;
            int windowLen = 0;
            long pos = 0;
            long unitStart = 0;
            long expected = firstOffset;
            long epoch = -1;
            while (pos + RecordBatches.HEADER_SIZE <= size) {
                if (pos < windowStart || pos + LAST_OFFSET_DELTA_POSITION + 4 > windowStart + windowLen) {
                    window.clear();
                    windowStart = pos;
                    windowLen = 0;
                    while (window.hasRemaining()) {
                        int n = ch.read(window, windowStart + windowLen);
                        if (n <= 0) {
                            break;
                        }
                        windowLen += n;
                    }
                    if (windowLen < LAST_OFFSET_DELTA_POSITION + 4) {
                        break; // the file shrank under us
                    }
                }
                int at = (int) (pos - windowStart);
                long base = window.getLong(at);
                int length = window.getInt(at + 8);
                int batchEpoch = window.getInt(at + 12);
                if (length < RecordBatches.MIN_BATCH_LENGTH || pos + RecordBatches.LOG_OVERHEAD + length > size) {
                    break;
                }
                if (pos - unitStart >= maxBytes) {
                    points.add(new long[] {pos, expected, epoch});
                    unitStart = pos;
                }
                int lastDelta = window.getInt(at + LAST_OFFSET_DELTA_POSITION);
                expected = base + Math.max(lastDelta, 0) + 1;
                epoch = batchEpoch;
                pos += RecordBatches.LOG_OVERHEAD + length;
            }
        } catch (NoSuchFileException e) {
            throw new LogReadException(path + ": the file is gone (deleted while planning the read)", path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return points;
    }
}
