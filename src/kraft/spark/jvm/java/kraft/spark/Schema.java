package kraft.spark;

import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** {@code kraft.spark.columns.RECORD_DDL}: the columns of a log read as a table (same order). */
final class Schema {
    static final StructType STRUCT = new StructType()
            .add("offset", DataTypes.LongType, false)
            .add("leader_epoch", DataTypes.IntegerType, false)
            .add("batch_base_offset", DataTypes.LongType, false)
            .add("timestamp", DataTypes.TimestampType, false)
            .add("is_control", DataTypes.BooleanType, false)
            .add("control_type", DataTypes.StringType, true)
            .add("record_type", DataTypes.StringType, true)
            .add("record_version", DataTypes.ShortType, true)
            .add("key", DataTypes.BinaryType, true)
            .add("value", DataTypes.BinaryType, true)
            .add("payload", DataTypes.StringType, true)
            .add("from_snapshot", DataTypes.BooleanType, false)
            .add("node", DataTypes.IntegerType, true)
            .add("file", DataTypes.StringType, false);

    static final int VARYING = 11; // offset .. payload: filled per row; the last three per unit

    private Schema() {}
}
