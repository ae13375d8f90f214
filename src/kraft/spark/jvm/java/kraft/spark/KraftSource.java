package kraft.spark;

import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("kraft")}: a node's metadata log read in the executors' JVMs.
 *
 * <p>Found by Spark's service loader once the kraft jar is on the classpath ({@code kraft_session}
 * adds it). It then serves the {@code kraft} name for batch reads, and hands streaming reads (and
 * batch reads that ask a live quorum for its high watermark) to the Python source registered as
 * {@value #PYTHON_NAME}, which speaks the quorum's protocol. Same rows, options and errors as the
 * Python source: {@code kraft.spark.source} documents them.
 */
public final class KraftSource implements TableProvider, DataSourceRegister {
    public static final String NAME = "kraft";
    /** The Python source's name when this one serves "kraft" (kraft.spark.session registers it). */
    public static final String PYTHON_NAME = "kraft_python";

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return Schema.STRUCT;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new KraftTable();
    }

    @Override
    public boolean supportsExternalMetadata() {
        return false;
    }
}
