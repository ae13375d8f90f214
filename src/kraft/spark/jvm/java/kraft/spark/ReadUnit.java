package kraft.spark;

import java.io.Serializable;
import java.util.Objects;

/**
 * A byte range of one file, read as one task: Java's twin of {@code kraft.spark.arrow_log.ReadUnit}.
 *
 * <p>{@code start}/{@code end}: byte positions (batch boundaries; {@code end} of a file's last
 * unit is the file size when planned); {@code firstOffset}: the base offset the batch at
 * {@code start} must have; {@code endOffset}: offsets of this unit are below it (the next unit's
 * or segment's first offset; null for the tail of the last segment), and for the last unit of a
 * non-last segment, where the data must end; {@code minEpoch}: the epoch of the batch before
 * {@code start} (-1: unknown); {@code fileSize}: the file's size when planned (a torn tail is
 * judged up to there); {@code lastSegment}: the file is the log's last segment; {@code node}: the
 * node id of the log directory, or null; {@code snapshotOffset}: for a snapshot, the offset its
 * rows carry (end offset - 1), else null.
 */
public final class ReadUnit implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The kinds of file a unit reads. */
    public enum Kind {
        SEGMENT("segment"),
        SNAPSHOT("snapshot");

        /** Python's name for the kind ({@code arrow_log.SEGMENT}/{@code SNAPSHOT}). */
        public final String pythonName;

        Kind(String pythonName) {
            this.pythonName = pythonName;
        }
    }

    public final String path;
    public final Kind kind;
    public final long start;
    public final long end;
    public final long firstOffset;
    public final Long endOffset;
    public final int minEpoch;
    public final long fileSize;
    public final boolean lastSegment;
    public final Integer node;
    public final Long snapshotOffset;

    public ReadUnit(String path, Kind kind, long start, long end, long firstOffset, Long endOffset, int minEpoch,
                    long fileSize, boolean lastSegment, Integer node, Long snapshotOffset) {
        this.path = Objects.requireNonNull(path, "path");
        this.kind = Objects.requireNonNull(kind, "kind");
        this.start = start;
        this.end = end;
        this.firstOffset = firstOffset;
        this.endOffset = endOffset;
        this.minEpoch = minEpoch;
        this.fileSize = fileSize;
        this.lastSegment = lastSegment;
        this.node = node;
        this.snapshotOffset = snapshotOffset;
    }

    /** {@code end - start}. */
    public long size() {
        return end - start;
    }

    /** Whether any row of this unit can pass {@code rf}. */
    public boolean mayContain(RowFilter rf) {
        if (rf.recordTypesEmpty()) {
            return false;
        }
        if (snapshotOffset != null) {
            return rf.admitsOffset(snapshotOffset);
        }
        return rf.mayContain(firstOffset, endOffset);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ReadUnit)) {
            return false;
        }
        ReadUnit u = (ReadUnit) o;
        return path.equals(u.path) && kind == u.kind && start == u.start && end == u.end
                && firstOffset == u.firstOffset && Objects.equals(endOffset, u.endOffset) && minEpoch == u.minEpoch
                && fileSize == u.fileSize && lastSegment == u.lastSegment && Objects.equals(node, u.node)
                && Objects.equals(snapshotOffset, u.snapshotOffset);
    }

    @Override
    public int hashCode() {
        return Objects.hash(path, kind, start, end, firstOffset, endOffset, minEpoch, fileSize, lastSegment, node,
                snapshotOffset);
    }

    @Override
    public String toString() {
        return "ReadUnit(path=" + path + ", kind=" + kind.pythonName + ", start=" + start + ", end=" + end
                + ", first_offset=" + firstOffset + ", end_offset=" + endOffset + ", min_epoch=" + minEpoch
                + ", file_size=" + fileSize + ", last_segment=" + lastSegment + ", node=" + node
                + ", snapshot_offset=" + snapshotOffset + ")";
    }
}
