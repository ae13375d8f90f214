package kraft.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Takes the filters the reader applies exactly ({@code kraft.spark.source.push_filter}: offset
 * comparisons and IN, record_type = / IN / IS NOT NULL) and leaves the rest to Spark.
 *
 * <p>Also prunes columns: a column the query does not read is never filled.
 *
 * <p>Unlike PySpark 4.3's Python sources, a DataSource V2 keeps what was pushed on its scan, not
 * on the relation, so pushing is safe for self-joins and unions: it is on unless the option
 * {@code pushFilters} is {@code false}.
 */
final class KraftScanBuilder implements SupportsPushDownFilters, SupportsPushDownRequiredColumns {
    private final CaseInsensitiveStringMap options;
    private StructType readSchema = Schema.STRUCT;
    private RowFilter pushedFilter = RowFilter.ALL;
    private final List<Filter> pushed = new ArrayList<>();

    KraftScanBuilder(CaseInsensitiveStringMap options) {
        this.options = options;
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
        if (Options.asksQuorum(options) || !Options.pushFilters(options)) {
            return filters;
        }
        List<Filter> rejected = new ArrayList<>();
        for (Filter f : filters) {
            RowFilter narrowed = push(pushedFilter, f);
            if (narrowed == null) {
                rejected.add(f);
            } else {
                pushedFilter = narrowed;
                pushed.add(f);
            }
        }
        return rejected.toArray(new Filter[0]);
    }

    @Override
    public Filter[] pushedFilters() {
        return pushed.toArray(new Filter[0]);
    }

    /** Only the columns the query reads are filled (and payloads decoded only if it reads them). */
    @Override
    public void pruneColumns(StructType requiredSchema) {
        if (!Options.asksQuorum(options)) { // the Python source, which serves those, reads all
            readSchema = requiredSchema;
        }
    }

    @Override
    public Scan build() {
        return new KraftScan(options, pushedFilter, readSchema);
    }

    private static boolean isIntegral(Object v) {
        return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte;
    }

    /** {@code rf} narrowed by {@code f}, or null if the reader cannot apply {@code f} exactly. */
    static RowFilter push(RowFilter rf, Filter f) {
        String[] refs = f.references();
        if (refs.length != 1) {
            return null;
        }
        String column = refs[0].toLowerCase(java.util.Locale.ROOT);
        if (column.equals("offset")) {
            if (f instanceof IsNotNull) {
                return rf; // offset is never null
            }
            if (f instanceof In) {
                List<Long> values = new ArrayList<>();
                for (Object v : ((In) f).values()) {
                    if (v == null) {
                        continue; // x IN (.., NULL) is never true for NULL
                    }
                    if (!isIntegral(v)) {
                        return null;
                    }
                    values.add(((Number) v).longValue());
                }
                return rf.offsetIn(values);
            }
            Object value;
            if (f instanceof EqualTo) {
                value = ((EqualTo) f).value();
            } else if (f instanceof GreaterThan) {
                value = ((GreaterThan) f).value();
            } else if (f instanceof GreaterThanOrEqual) {
                value = ((GreaterThanOrEqual) f).value();
            } else if (f instanceof LessThan) {
                value = ((LessThan) f).value();
            } else if (f instanceof LessThanOrEqual) {
                value = ((LessThanOrEqual) f).value();
            } else {
                return null;
            }
            if (!isIntegral(value)) {
                return null;
            }
            long v = ((Number) value).longValue();
            if (f instanceof EqualTo) {
                return rf.offsetIn(List.of(v));
            }
            if (f instanceof GreaterThan) {
                return v == Long.MAX_VALUE ? rf.offsetIn(List.of()) : rf.offsetAtLeast(v + 1);
            }
            if (f instanceof GreaterThanOrEqual) {
                return rf.offsetAtLeast(v);
            }
            if (f instanceof LessThan) {
                return rf.offsetBelow(v);
            }
            return v == Long.MAX_VALUE ? rf : rf.offsetBelow(v + 1);
        }
        if (column.equals("record_type")) {
            if (f instanceof IsNotNull) {
                return rf.recordTypePresent();
            }
            if (f instanceof EqualTo && ((EqualTo) f).value() instanceof String) {
                return rf.recordTypeIn(List.of((String) ((EqualTo) f).value()));
            }
            if (f instanceof In) {
                List<String> names = new ArrayList<>();
                for (Object v : ((In) f).values()) {
                    if (v == null) {
                        continue;
                    }
                    if (!(v instanceof String)) {
                        return null;
                    }
                    names.add((String) v);
                }
                return rf.recordTypeIn(names);
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "KraftScanBuilder" + Arrays.toString(pushedFilters());
    }
}
