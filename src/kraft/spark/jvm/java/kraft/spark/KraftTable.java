package kraft.spark;

import java.util.EnumSet;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The log as a table: batch reads here, micro-batch reads handed to the Python source. */
final class KraftTable implements SupportsRead {
    @Override
    public String name() {
        return KraftSource.NAME;
    }

    @Override
    public StructType schema() {
        return Schema.STRUCT;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        return new KraftScanBuilder(options);
    }
}
