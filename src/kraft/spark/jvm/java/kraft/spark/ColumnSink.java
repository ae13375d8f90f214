package kraft.spark;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Rows straight into Spark's column vectors, reused from batch to batch, for the columns the
 * query reads (the scan's pruned schema; a column it does not read gets no vector and costs
 * nothing). The three columns that are the same for a whole unit (from_snapshot, node, file) are
 * constant vectors: no per-row copy.
 */
final class ColumnSink implements RowSink {
    // Per-row vectors by the column's position in Schema.STRUCT; null: not read.
    private final WritableColumnVector offset;
    private final WritableColumnVector epoch;
    private final WritableColumnVector base;
    private final WritableColumnVector timestamp;
    private final WritableColumnVector isControl;
    private final WritableColumnVector controlType;
    private final WritableColumnVector recordType;
    private final WritableColumnVector recordVersion;
    private final WritableColumnVector key;
    private final WritableColumnVector value;
    private final WritableColumnVector payload;
    private final List<WritableColumnVector> varying = new ArrayList<>();
    private final String[] columns; // the read schema's names, in its order
    private final ReadUnit unit;
    private final int capacity;
    private final List<ConstantColumnVector> constants = new ArrayList<>();
    private int rows;
    // The last strings seen, with their UTF-8 bytes: types and control names repeat row after row.
    private String lastType;
    private byte[] lastTypeBytes;
    private String lastControl;
    private byte[] lastControlBytes;
    private String lastPayload;
    private byte[] lastPayloadBytes;

    ColumnSink(ReadUnit unit, StructType readSchema, int capacity) {
        this.unit = unit;
        this.capacity = capacity;
        this.columns = readSchema.fieldNames();
        offset = vector(readSchema, "offset");
        epoch = vector(readSchema, "leader_epoch");
        base = vector(readSchema, "batch_base_offset");
        timestamp = vector(readSchema, "timestamp");
        isControl = vector(readSchema, "is_control");
        controlType = vector(readSchema, "control_type");
        recordType = vector(readSchema, "record_type");
        recordVersion = vector(readSchema, "record_version");
        key = vector(readSchema, "key");
        value = vector(readSchema, "value");
        payload = vector(readSchema, "payload");
    }

    /** Whether the read needs the decoded payload columns (else the reader may skip decoding). */
    static boolean needsPayloads(StructType readSchema) {
        for (String name : readSchema.fieldNames()) {
            if (name.equals("control_type") || name.equals("record_type") || name.equals("record_version")
                    || name.equals("payload")) {
                return true;
            }
        }
        return false;
    }

    private WritableColumnVector vector(StructType readSchema, String name) {
        for (StructField f : readSchema.fields()) {
            if (f.name().equals(name)) {
                WritableColumnVector v = new OnHeapColumnVector(capacity, f.dataType());
                varying.add(v);
                return v;
            }
        }
        return null;
    }

    @Override
    public void row(long rowOffset, int leaderEpoch, long batchBaseOffset, long timestampMs, boolean control,
                    String controlTypeName, String recordTypeName, int version,
                    byte[] keyBuf, int keyOff, int keyLen,
                    byte[] valueBuf, int valueOff, int valueLen,
                    String payloadJson) {
        if (offset != null) {
            offset.appendLong(rowOffset);
        }
        if (epoch != null) {
            epoch.appendInt(leaderEpoch);
        }
        if (base != null) {
            base.appendLong(batchBaseOffset);
        }
        if (timestamp != null) {
            timestamp.appendLong(Math.multiplyExact(timestampMs, 1000L));
        }
        if (isControl != null) {
            isControl.appendBoolean(control);
        }
        if (controlType != null) {
            if (controlTypeName == null) {
                controlType.appendNull();
            } else {
                if (!controlTypeName.equals(lastControl)) {
                    lastControl = controlTypeName;
                    lastControlBytes = controlTypeName.getBytes(StandardCharsets.UTF_8);
                }
                controlType.appendByteArray(lastControlBytes, 0, lastControlBytes.length);
            }
        }
        if (recordType != null) {
            if (recordTypeName == null) {
                recordType.appendNull();
            } else {
                if (!recordTypeName.equals(lastType)) {
                    lastType = recordTypeName;
                    lastTypeBytes = recordTypeName.getBytes(StandardCharsets.UTF_8);
                }
                recordType.appendByteArray(lastTypeBytes, 0, lastTypeBytes.length);
            }
        }
        if (recordVersion != null) {
            if (version < 0) {
                recordVersion.appendNull();
            } else {
                recordVersion.appendShort((short) version);
            }
        }
        if (key != null) {
            if (keyLen < 0) {
                key.appendNull();
            } else {
                key.appendByteArray(keyBuf, keyOff, keyLen);
            }
        }
        if (value != null) {
            if (valueLen < 0) {
                value.appendNull();
            } else {
                value.appendByteArray(valueBuf, valueOff, valueLen);
            }
        }
        if (payload != null) {
            if (payloadJson == null) {
                payload.appendNull();
            } else {
                if (payloadJson != lastPayload) { // a cached decode hands back the same String
                    lastPayload = payloadJson;
                    lastPayloadBytes = payloadJson.getBytes(StandardCharsets.UTF_8);
                }
                payload.appendByteArray(lastPayloadBytes, 0, lastPayloadBytes.length);
            }
        }
        rows++;
    }

    @Override
    public int rows() {
        return rows;
    }

    /** Empties the vectors for the next batch (the previous batch must no longer be in use). */
    void reset() {
        for (WritableColumnVector v : varying) {
            v.reset();
        }
        rows = 0;
    }

    /** The rows added since the last reset, as a batch of the read schema's columns. */
    ColumnarBatch batch() {
        closeConstants();
        ColumnVector[] out = new ColumnVector[columns.length];
        for (int i = 0; i < columns.length; i++) {
            out[i] = column(columns[i]);
        }
        return new ColumnarBatch(out, rows);
    }

    private ColumnVector column(String name) {
        switch (name) {
            case "offset": return offset;
            case "leader_epoch": return epoch;
            case "batch_base_offset": return base;
            case "timestamp": return timestamp;
            case "is_control": return isControl;
            case "control_type": return controlType;
            case "record_type": return recordType;
            case "record_version": return recordVersion;
            case "key": return key;
            case "value": return value;
            case "payload": return payload;
            case "from_snapshot": {
                ConstantColumnVector c = constant(DataTypes.BooleanType);
                c.setBoolean(unit.snapshotOffset != null);
                return c;
            }
            case "node": {
                ConstantColumnVector c = constant(DataTypes.IntegerType);
                if (unit.node == null) {
                    c.setNull();
                } else {
                    c.setInt(unit.node);
                }
                return c;
            }
            case "file": {
                ConstantColumnVector c = constant(DataTypes.StringType);
                c.setUtf8String(UTF8String.fromString(unit.path));
                return c;
            }
            default:
                throw new IllegalStateException("no column " + name + " in the kraft schema");
        }
    }

    private ConstantColumnVector constant(org.apache.spark.sql.types.DataType type) {
        ConstantColumnVector c = new ConstantColumnVector(rows, type);
        constants.add(c);
        return c;
    }

    private void closeConstants() {
        for (ConstantColumnVector c : constants) {
            c.close();
        }
        constants.clear();
    }

    void close() {
        for (WritableColumnVector v : varying) {
            v.close();
        }
        closeConstants();
    }
}
