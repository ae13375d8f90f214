package kraft.spark;

import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Reads one unit into column batches of about {@link #BATCH_ROWS} rows (whole log batches). */
final class KraftPartitionReader implements PartitionReader<ColumnarBatch> {
    /** Rows per column batch, as the Python source's Arrow batches (a log batch is never split). */
    static final int BATCH_ROWS = 32768;

    private final UnitReader reader;
    private final ColumnSink sink;
    private ColumnarBatch current;
    private boolean finished; // the unit reader said nothing more will come

    KraftPartitionReader(KraftPartition partition) {
        this.sink = new ColumnSink(partition.unit, partition.readSchema, BATCH_ROWS);
        // Payloads are decoded when the query reads them or filters on the record type.
        boolean decode = ColumnSink.needsPayloads(partition.readSchema) || partition.rowFilter.filtersRecordTypes();
        this.reader = new UnitReader(partition.unit, partition.rowFilter, decode ? new Payloads() : Payloads.none());
    }

    @Override
    public boolean next() {
        sink.reset();
        while (!finished && sink.rows() == 0) {
            finished = !reader.next(sink, BATCH_ROWS);
        }
        if (sink.rows() == 0) {
            return false;
        }
        current = sink.batch();
        return true;
    }

    @Override
    public ColumnarBatch get() {
        return current;
    }

    @Override
    public void close() {
        reader.close();
        sink.close();
    }
}
