import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import kraft.spark.LogFiles;
import kraft.spark.LogPlanner;
import kraft.spark.LogReadException;
import kraft.spark.Payloads;
import kraft.spark.ReadUnit;
import kraft.spark.RowFilter;
import kraft.spark.RowSink;
import kraft.spark.UnitReader;

/**
 * Drives the Java reader for tests/unit/spark/jvm_reader/test_jvm_reader.py, printing JSON lines
 * that the test compares with Python's kraft.spark.arrow_log.
 *
 * <pre>
 * ReaderProbe batch FILE     run each line of FILE (tab-separated commands below), each output
 *                            introduced by {"scenario": i}
 * commands:
 *   read PATH SNAPSHOTS MAXBYTES FILTER BATCHROWS   plan, then each unit and its rows (or its error)
 *   locate PATH                                     the LogFiles of PATH (or the error)
 *   filter FILTER FILTER                            what the intersection of the two answers
 *   gone PATH SNAPSHOTS INDEX                       plan, delete unit INDEX's file, then read
 * ReaderProbe bench PATH MAXBYTES                   rows/s of every unit into a counting sink
 * </pre>
 *
 * FILTER: "-" (all rows) or ";"-separated start=N, end=N, offsets=N,N,..., types=A,B,..., present.
 */
public final class ReaderProbe {
    private ReaderProbe() {
    }

    public static void main(String[] args) throws IOException {
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        try {
            switch (args[0]) {
                case "batch":
                    List<String> lines = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
                    for (int i = 0; i < lines.size(); i++) {
                        out.write("{\"scenario\": " + i + "}\n");
                        run(lines.get(i).split("\t", -1), out);
                    }
                    break;
                case "bench":
                    bench(args[1], Long.parseLong(args[2]), out);
                    break;
                default:
                    run(args, out);
            }
        } finally {
            out.flush();
        }
    }

    private static void run(String[] cmd, Writer out) throws IOException {
        switch (cmd[0]) {
            case "read":
                read(cmd[1], Boolean.parseBoolean(cmd[2]), Long.parseLong(cmd[3]), filter(cmd[4]),
                        Integer.parseInt(cmd[5]), -1, out);
                break;
            case "locate":
                try {
                    LogFiles f = LogFiles.locate(cmd[1]);
                    StringBuilder sb = new StringBuilder("{\"segments\": [");
                    for (int i = 0; i < f.segments.size(); i++) {
                        sb.append(i == 0 ? "" : ", ").append('[').append(f.segments.get(i).baseOffset).append(", ")
                                .append(str(f.segments.get(i).path)).append(']');
                    }
                    sb.append("], \"snapshots\": [");
                    for (int i = 0; i < f.snapshots.size(); i++) {
                        LogFiles.Snapshot s = f.snapshots.get(i);
                        sb.append(i == 0 ? "" : ", ").append('[').append(s.endOffset).append(", ").append(s.epoch)
                                .append(", ").append(str(s.path)).append(']');
                    }
                    sb.append("], \"last_segment\": ").append(str(f.lastSegment)).append(", \"node\": ")
                            .append(f.node).append(", \"single_file\": ").append(f.singleFile).append("}\n");
                    out.write(sb.toString());
                } catch (RuntimeException e) {
                    out.write(error(e) + "\n");
                }
                break;
            case "gone":
                read(cmd[1], Boolean.parseBoolean(cmd[2]), LogPlanner.DEFAULT_MAX_BYTES_PER_UNIT, RowFilter.ALL, 4096,
                        Integer.parseInt(cmd[3]), out);
                break;
            case "filter":
                probeFilter(filter(cmd[1]).intersect(filter(cmd[2])), out);
                break;
            default:
                throw new IllegalArgumentException("unknown command " + cmd[0]);
        }
    }

    /** The answers of {@code rf} on a grid of offsets, ranges and names (see the test's twin). */
    private static void probeFilter(RowFilter rf, Writer out) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"start\": ").append(rf.start()).append(", \"end\": ").append(rf.end())
                .append(", \"filters_offsets\": ").append(rf.filtersOffsets())
                .append(", \"filters_record_types\": ").append(rf.filtersRecordTypes()).append(", \"admits\": [");
        for (long o = -2; o < 25; o++) {
            sb.append(o == -2 ? "" : ", ").append(rf.admitsOffset(o));
        }
        sb.append("], \"may_contain\": [");
        boolean first = true;
        for (long lo = -2; lo < 25; lo += 3) {
            for (long hi = -1; hi < 28; hi += 4) {
                sb.append(first ? "" : ", ").append(rf.mayContain(lo, hi)).append(", ").append(rf.covers(lo, hi));
                first = false;
            }
            sb.append(", ").append(rf.mayContain(lo, null));
        }
        sb.append("], \"types\": [");
        String[] names = {null, "A", "B", "C"};
        for (int i = 0; i < names.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(rf.admitsRecordType(names[i]));
        }
        sb.append("]}\n");
        out.write(sb.toString());
    }

    static RowFilter filter(String spec) {
        RowFilter rf = RowFilter.ALL;
        if (spec.equals("-")) {
            return rf;
        }
        for (String part : spec.split(";")) {
            int eq = part.indexOf('=');
            String key = eq < 0 ? part : part.substring(0, eq);
            String value = eq < 0 ? "" : part.substring(eq + 1);
            switch (key) {
                case "start":
                    rf = rf.offsetAtLeast(Long.parseLong(value));
                    break;
                case "end":
                    rf = rf.offsetBelow(Long.parseLong(value));
                    break;
                case "offsets": {
                    List<Long> offsets = new ArrayList<>();
                    for (String o : value.isEmpty() ? new String[0] : value.split(",")) {
                        offsets.add(Long.parseLong(o));
                    }
                    rf = rf.offsetIn(offsets);
                    break;
                }
                case "types":
                    rf = rf.recordTypeIn(value.isEmpty() ? List.of() : List.of(value.split(",")));
                    break;
                case "present":
                    rf = rf.recordTypePresent();
                    break;
                default:
                    throw new IllegalArgumentException("bad filter part " + part);
            }
        }
        return rf;
    }

    private static void read(String path, boolean snapshots, long maxBytes, RowFilter rf, int batchRows, int delete,
                             Writer out) throws IOException {
        List<ReadUnit> units;
        try {
            units = LogPlanner.plan(path, snapshots, maxBytes, rf);
        } catch (RuntimeException e) {
            out.write("{\"plan_error\": " + error(e) + "}\n");
            return;
        }
        if (delete >= 0) {
            Files.delete(Paths.get(units.get(delete).path));
        }
        Payloads payloads = new Payloads();
        for (ReadUnit u : units) {
            out.write("{\"unit\": {\"path\": " + str(u.path) + ", \"kind\": " + str(u.kind.pythonName) + ", \"start\": "
                    + u.start + ", \"end\": " + u.end + ", \"first_offset\": " + u.firstOffset + ", \"end_offset\": "
                    + u.endOffset + ", \"min_epoch\": " + u.minEpoch + ", \"file_size\": " + u.fileSize
                    + ", \"last_segment\": " + u.lastSegment + ", \"node\": " + u.node + ", \"snapshot_offset\": "
                    + u.snapshotOffset + "}}\n");
            JsonSink sink = new JsonSink(u, batchRows);
            try (UnitReader reader = new UnitReader(u, rf, payloads)) {
                while (true) {
                    sink.batch.setLength(0);
                    sink.n = 0;
                    boolean more = reader.next(sink, batchRows);
                    if (!more && sink.n > 0) {
                        throw new AssertionError("next returned false after adding rows");
                    }
                    if (sink.n > 0) {
                        out.write("{\"batch\": " + sink.n + "}\n");
                        out.write(sink.batch.toString());
                    }
                    if (!more) {
                        break;
                    }
                    if (sink.n < batchRows) {
                        // true with fewer rows than asked: only at the unit's end, so the next call ends it.
                        sink.batch.setLength(0);
                        sink.n = 0;
                        if (reader.next(sink, batchRows) || sink.n > 0) {
                            throw new AssertionError("a short batch that was not the last");
                        }
                        break;
                    }
                }
                out.write("{\"end\": true}\n");
            } catch (LogReadException | IllegalArgumentException e) {
                out.write(error(e) + "\n");
            }
        }
    }

    private static String error(RuntimeException e) {
        if (e instanceof LogReadException) {
            LogReadException l = (LogReadException) e;
            return "{\"error\": " + str(l.getMessage()) + ", \"file\": " + str(l.file) + ", \"position\": "
                    + (l.position == -1 ? "null" : Long.toString(l.position)) + ", \"offset\": "
                    + (l.offset == -1 ? "null" : Long.toString(l.offset)) + "}";
        }
        if (e instanceof IllegalArgumentException) {
            return "{\"storage_error\": " + str(e.getMessage()) + "}";
        }
        return "{\"exception\": " + str(e.toString()) + "}";
    }

    /** A JSON string literal (non-ASCII as \\u escapes, so that json.loads gives the same str). */
    static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    private static String b64(byte[] buf, int off, int len) {
        if (len < 0) {
            return "null";
        }
        byte[] copy = new byte[len];
        System.arraycopy(buf, off, copy, 0, len);
        return '"' + Base64.getEncoder().encodeToString(copy) + '"';
    }

    /** Every row as a JSON line with all the columns (the unit's constant ones included). */
    static final class JsonSink implements RowSink {
        final StringBuilder batch = new StringBuilder();
        final ReadUnit unit;
        final int capacity;
        int n;

        JsonSink(ReadUnit unit, int capacity) {
            this.unit = unit;
            this.capacity = capacity;
        }

        @Override
        public void row(long offset, int leaderEpoch, long batchBaseOffset, long timestampMs, boolean isControl,
                        String controlType, String recordType, int recordVersion, byte[] keyBuf, int keyOff,
                        int keyLen, byte[] valueBuf, int valueOff, int valueLen, String payload) {
            n++;
            batch.append("{\"offset\": ").append(offset).append(", \"leader_epoch\": ").append(leaderEpoch)
                    .append(", \"batch_base_offset\": ").append(batchBaseOffset).append(", \"timestamp_ms\": ")
                    .append(timestampMs).append(", \"is_control\": ").append(isControl).append(", \"control_type\": ")
                    .append(str(controlType)).append(", \"record_type\": ").append(str(recordType))
                    .append(", \"record_version\": ").append(recordVersion < 0 ? "null" : Integer.toString(recordVersion))
                    .append(", \"key\": ").append(b64(keyBuf, keyOff, keyLen)).append(", \"value\": ")
                    .append(b64(valueBuf, valueOff, valueLen)).append(", \"payload\": ").append(str(payload))
                    .append(", \"from_snapshot\": ").append(unit.snapshotOffset != null).append(", \"node\": ")
                    .append(unit.node).append(", \"file\": ").append(str(unit.path)).append("}\n");
        }

        @Override
        public int rows() {
            return n;
        }
    }

    /** Counts rows and value bytes (so that nothing is optimised away). */
    static final class CountingSink implements RowSink {
        long total;
        long bytes;
        int n;

        @Override
        public void row(long offset, int leaderEpoch, long batchBaseOffset, long timestampMs, boolean isControl,
                        String controlType, String recordType, int recordVersion, byte[] keyBuf, int keyOff,
                        int keyLen, byte[] valueBuf, int valueOff, int valueLen, String payload) {
            n++;
            bytes += valueLen + offset;
        }

        @Override
        public int rows() {
            return n;
        }
    }

    private static void bench(String path, long maxBytes, Writer out) throws IOException {
        Payloads payloads = new Payloads();
        for (int round = 0; round < 5; round++) {
            long started = System.nanoTime();
            List<ReadUnit> units = LogPlanner.plan(path, false, maxBytes, RowFilter.ALL);
            long planned = System.nanoTime();
            CountingSink sink = new CountingSink();
            for (ReadUnit u : units) {
                try (UnitReader reader = new UnitReader(u, RowFilter.ALL, payloads)) {
                    while (true) {
                        sink.total += sink.n;
                        sink.n = 0;
                        if (!reader.next(sink, 32768)) {
                            break;
                        }
                    }
                }
            }
            sink.total += sink.n;
            long done = System.nanoTime();
            double s = (done - started) / 1e9;
            out.write(String.format("{\"round\": %d, \"units\": %d, \"rows\": %d, \"seconds\": %.3f, \"plan_ms\": %.1f, "
                    + "\"rows_per_s\": %.0f, \"check\": %d}%n", round, units.size(), sink.total, s,
                    (planned - started) / 1e6, sink.total / s, sink.bytes));
            out.flush();
        }
    }
}
