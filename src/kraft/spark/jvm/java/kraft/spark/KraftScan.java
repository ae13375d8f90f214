package kraft.spark;

import java.util.List;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** One read: plans the units on the driver when Spark asks for partitions. */
final class KraftScan implements Scan, Batch {
    private final CaseInsensitiveStringMap options;
    private final RowFilter pushedFilter;
    private final StructType readSchema;
    private Options parsed; // checked by toBatch, before planning

    KraftScan(CaseInsensitiveStringMap options, RowFilter pushedFilter, StructType readSchema) {
        this.options = options;
        this.pushedFilter = pushedFilter;
        this.readSchema = readSchema;
    }

    @Override
    public StructType readSchema() {
        return readSchema;
    }

    @Override
    public String description() {
        return "kraft " + options.getOrDefault("path", "") + (pushedFilter == RowFilter.ALL ? "" : " " + pushedFilter);
    }

    @Override
    public Batch toBatch() {
        if (Options.asksQuorum(options)) {
            return python().toBatch();
        }
        parsed = Options.parse(options); // fail at planning on a bad option, before any task starts
        return this;
    }

    @Override
    public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
        return python().toMicroBatchStream(checkpointLocation);
    }

    /** The same read by the Python source (it must be registered as KraftSource.PYTHON_NAME). */
    private Scan python() {
        boolean registered = org.apache.spark.sql.classic.SparkSession.active().sessionState()
                .dataSourceManager().dataSourceExists(KraftSource.PYTHON_NAME);
        if (!registered) {
            throw new IllegalStateException("streaming reads of the kraft source, and reads with "
                + "bootstrap.controllers, are served by its Python half, which this session lacks: call "
                + "kraft.spark.session.register(spark) once (kraft.spark.session.kraft_session does)");
        }
        PythonDataSourceV2 provider = new PythonDataSourceV2();
        provider.setShortName(KraftSource.PYTHON_NAME);
        Table table = provider.getTable(Schema.STRUCT, new Transform[0], options.asCaseSensitiveMap());
        return ((SupportsRead) table).newScanBuilder(options).build();
    }

    @Override
    public InputPartition[] planInputPartitions() {
        RowFilter rf = parsed.rowFilter().intersect(pushedFilter);
        List<ReadUnit> units = LogPlanner.plan(parsed.path, parsed.includeSnapshots, parsed.maxBytesPerPartition, rf);
        InputPartition[] out = new InputPartition[units.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = new KraftPartition(units.get(i), rf, readSchema);
        }
        return out;
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new KraftReaderFactory();
    }
}
