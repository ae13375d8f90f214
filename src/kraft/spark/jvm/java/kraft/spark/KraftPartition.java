package kraft.spark;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.types.StructType;

/** One read unit, the row filter to apply to it and the columns to fill. */
final class KraftPartition implements InputPartition {
    private static final long serialVersionUID = 1L;
    final ReadUnit unit;
    final RowFilter rowFilter;
    final StructType readSchema;

    KraftPartition(ReadUnit unit, RowFilter rowFilter, StructType readSchema) {
        this.unit = unit;
        this.rowFilter = rowFilter;
        this.readSchema = readSchema;
    }
}
