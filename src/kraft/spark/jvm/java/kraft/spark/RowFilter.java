package kraft.spark;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Collection;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The rows a read keeps (the AND of every constraint); {@link #ALL} keeps all: Java's twin of
 * {@code kraft.spark.arrow_log.RowFilter}, with the same semantics.
 *
 * <p>{@code start}/{@code end} bound {@code offset} (inclusive/exclusive), {@code offsets} lists
 * the allowed offsets; {@code recordTypes} lists the allowed {@code record_type} values and
 * {@code recordTypeNotNull} drops rows without one (so both drop every control record).
 *
 * <p>Immutable: every narrowing method returns a new filter.
 */
public final class RowFilter implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The filter that keeps every row. */
    public static final RowFilter ALL = new RowFilter(null, null, null, null, false);

    private final Long start;
    private final Long end;
    private final long[] offsets; // sorted, distinct; null: any offset
    private final String[] recordTypes; // sorted, distinct; null: any record type
    private final boolean recordTypeNotNull;

    private RowFilter(Long start, Long end, long[] offsets, String[] recordTypes, boolean recordTypeNotNull) {
        this.start = start;
        this.end = end;
        this.offsets = offsets;
        this.recordTypes = recordTypes;
        this.recordTypeNotNull = recordTypeNotNull;
    }

    /** Offsets at least {@code offset} (inclusive lower bound), and whatever this filter asks. */
    public RowFilter offsetAtLeast(long offset) {
        return new RowFilter(start == null ? offset : Math.max(start, offset), end, offsets, recordTypes,
                recordTypeNotNull);
    }

    /** Offsets below {@code offset} (exclusive upper bound), and whatever this filter asks. */
    public RowFilter offsetBelow(long offset) {
        return new RowFilter(start, end == null ? offset : Math.min(end, offset), offsets, recordTypes,
                recordTypeNotNull);
    }

    /** Offsets in {@code allowed} (intersected with an earlier list), and whatever this filter asks. */
    public RowFilter offsetIn(Collection<Long> allowed) {
        TreeSet<Long> set = new TreeSet<>();
        for (Long o : allowed) {
            set.add(Objects.requireNonNull(o, "offset"));
        }
        long[] arr = new long[set.size()];
        int n = 0;
        for (long o : set) {
            if (offsets == null || Arrays.binarySearch(offsets, o) >= 0) {
                arr[n++] = o;
            }
        }
        return new RowFilter(start, end, Arrays.copyOf(arr, n), recordTypes, recordTypeNotNull);
    }

    /** Record types in {@code names} (intersected with an earlier list), and whatever this filter asks. */
    public RowFilter recordTypeIn(Collection<String> names) {
        TreeSet<String> set = new TreeSet<>();
        for (String s : names) {
            set.add(Objects.requireNonNull(s, "record type"));
        }
        String[] arr = new String[set.size()];
        int n = 0;
        for (String s : set) {
            if (recordTypes == null || Arrays.binarySearch(recordTypes, s) >= 0) {
                arr[n++] = s;
            }
        }
        return new RowFilter(start, end, offsets, Arrays.copyOf(arr, n), recordTypeNotNull);
    }

    /** Rows with a record type only (no control record, no value that is not a metadata record). */
    public RowFilter recordTypePresent() {
        return new RowFilter(start, end, offsets, recordTypes, true);
    }

    /** The rows both filters keep. */
    public RowFilter intersect(RowFilter other) {
        RowFilter out = this;
        if (other.start != null) {
            out = out.offsetAtLeast(other.start);
        }
        if (other.end != null) {
            out = out.offsetBelow(other.end);
        }
        if (other.offsets != null) {
            out = out.offsetIn(boxed(other.offsets));
        }
        if (other.recordTypes != null) {
            out = out.recordTypeIn(Arrays.asList(other.recordTypes));
        }
        if (other.recordTypeNotNull) {
            out = out.recordTypePresent();
        }
        return out;
    }

    private static Collection<Long> boxed(long[] values) {
        TreeSet<Long> out = new TreeSet<>();
        for (long v : values) {
            out.add(v);
        }
        return out;
    }

    /** The inclusive lower bound on offsets, or null. */
    public Long start() {
        return start;
    }

    /** The exclusive upper bound on offsets, or null. */
    public Long end() {
        return end;
    }

    /** The allowed offsets, ascending (a copy), or null for any. */
    public long[] offsets() {
        return offsets == null ? null : offsets.clone();
    }

    /** The allowed record types, sorted (a copy), or null for any. */
    public String[] recordTypes() {
        return recordTypes == null ? null : recordTypes.clone();
    }

    /** Whether rows without a record type are dropped. */
    public boolean recordTypeNotNull() {
        return recordTypeNotNull;
    }

    /** Whether the filter looks at record types at all. */
    public boolean filtersRecordTypes() {
        return recordTypes != null || recordTypeNotNull;
    }

    /** Whether the filter looks at offsets at all. */
    public boolean filtersOffsets() {
        return start != null || end != null || offsets != null;
    }

    /** Whether the record-type list is present and empty (no row can pass). */
    boolean recordTypesEmpty() {
        return recordTypes != null && recordTypes.length == 0;
    }

    public boolean admitsOffset(long offset) {
        return (start == null || offset >= start)
                && (end == null || offset < end)
                && (offsets == null || Arrays.binarySearch(offsets, offset) >= 0);
    }

    /** Whether a row of record type {@code name} (null: none) passes. */
    public boolean admitsRecordType(String name) {
        if (name == null) {
            return !filtersRecordTypes();
        }
        return recordTypes == null || Arrays.binarySearch(recordTypes, name) >= 0;
    }

    /** Whether any offset in {@code [low, high)} ({@code high} null: unbounded) can pass. */
    public boolean mayContain(long low, Long high) {
        if (recordTypesEmpty()) {
            return false;
        }
        long lo = start == null ? low : Math.max(low, start);
        Long hi = end == null ? high : (high == null ? end : Long.valueOf(Math.min(high, end)));
        if (hi != null && lo >= hi) {
            return false;
        }
        if (offsets == null) {
            return true;
        }
        // The first allowed offset >= lo, below hi.
        int i = Arrays.binarySearch(offsets, lo);
        if (i < 0) {
            i = -i - 1;
        }
        return i < offsets.length && (hi == null || offsets[i] < hi);
    }

    /** {@link #mayContain(long, Long)} with a bound {@code high}, without boxing it. */
    boolean mayContainRange(long low, long high) {
        if (recordTypesEmpty()) {
            return false;
        }
        long lo = start == null ? low : Math.max(low, start);
        long hi = end == null ? high : Math.min(high, end);
        if (lo >= hi) {
            return false;
        }
        if (offsets == null) {
            return true;
        }
        int i = Arrays.binarySearch(offsets, lo);
        if (i < 0) {
            i = -i - 1;
        }
        return i < offsets.length && offsets[i] < hi;
    }

    /** Whether every offset in {@code [low, high)} passes the offset constraints. */
    public boolean covers(long low, long high) {
        return offsets == null && (start == null || low >= start) && (end == null || high <= end);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RowFilter)) {
            return false;
        }
        RowFilter f = (RowFilter) o;
        return Objects.equals(start, f.start) && Objects.equals(end, f.end) && Arrays.equals(offsets, f.offsets)
                && Arrays.equals(recordTypes, f.recordTypes) && recordTypeNotNull == f.recordTypeNotNull;
    }

    @Override
    public int hashCode() {
        return Objects.hash(start, end, Arrays.hashCode(offsets), Arrays.hashCode(recordTypes), recordTypeNotNull);
    }

    @Override
    public String toString() {
        return "RowFilter(start=" + (start == null ? "None" : start) + ", end=" + (end == null ? "None" : end)
                + ", offsets=" + (offsets == null ? "None" : Arrays.toString(offsets))
                + ", record_types=" + (recordTypes == null ? "None" : Arrays.toString(recordTypes))
                + ", record_type_not_null=" + (recordTypeNotNull ? "True" : "False") + ")";
    }
}
