package kraft.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The options of one batch read, checked as {@code kraft.spark.source.ReadOptions.parse} checks
 * them (same names, same messages; a bad one is an {@link IllegalArgumentException}).
 */
final class Options {
    static final long DEFAULT_MAX_BYTES_PER_PARTITION = 32L * 1024 * 1024;
    static final String[] KNOWN = {
        "path", "startingOffset", "endingOffset", "includeSnapshots", "committedOnly",
        "bootstrap.controllers", "maxBytesPerPartition", "pushFilters",
    };

    final String path;
    final Long startingOffset;
    final Long endingOffset;
    final boolean includeSnapshots;
    final boolean committedOnly;
    final String bootstrapControllers;
    final long maxBytesPerPartition;

    private Options(Map<String, String> lowered) {
        path = lowered.get("path");
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException(
                "the kraft source needs a path: spark.read.format(\"kraft\").load(METADATA_LOG_DIR)");
        }
        committedOnly = bool(lowered, "committedOnly");
        endingOffset = integer(lowered, "endingOffset");
        String bootstrap = lowered.get("bootstrap.controllers");
        bootstrap = bootstrap == null ? null : bootstrap.strip();
        if (committedOnly && endingOffset == null && (bootstrap == null || bootstrap.isEmpty())) {
            throw new IllegalArgumentException(
                "committedOnly needs endingOffset (a high watermark you know) or bootstrap.controllers "
                    + "(host:port,... of the controllers, to ask the quorum's leader for its high watermark)");
        }
        if (bootstrap != null && !committedOnly) {
            throw new IllegalArgumentException("bootstrap.controllers is only used with committedOnly=true");
        }
        Long maxBytes = integer(lowered, "maxBytesPerPartition");
        if (maxBytes != null && maxBytes <= 0) {
            throw new IllegalArgumentException("option maxBytesPerPartition must be positive, got " + maxBytes);
        }
        startingOffset = integer(lowered, "startingOffset");
        includeSnapshots = bool(lowered, "includeSnapshots");
        bootstrapControllers = bootstrap == null || bootstrap.isEmpty() ? null : bootstrap;
        maxBytesPerPartition = maxBytes == null ? DEFAULT_MAX_BYTES_PER_PARTITION : maxBytes;
        bool(lowered, "pushFilters"); // checked here too, so that a bad value fails every read
    }

    static Options parse(CaseInsensitiveStringMap options) {
        return new Options(lowered(options));
    }

    /** Whether the read takes pushed filters (default true; see KraftScanBuilder). */
    static boolean pushFilters(CaseInsensitiveStringMap options) {
        Map<String, String> lowered = lowered(options);
        return !lowered.containsKey("pushfilters") || bool(lowered, "pushFilters");
    }

    /**
     * Whether the read asks a live quorum for its high watermark ({@code bootstrap.controllers}):
     * the Python source, which speaks the quorum's protocol, serves such reads.
     */
    static boolean asksQuorum(CaseInsensitiveStringMap options) {
        return options.containsKey("bootstrap.controllers");
    }

    /** The offset bounds the options set (without a quorum's high watermark). */
    RowFilter rowFilter() {
        RowFilter rf = RowFilter.ALL;
        if (startingOffset != null) {
            rf = rf.offsetAtLeast(startingOffset);
        }
        if (endingOffset != null) {
            rf = rf.offsetBelow(endingOffset);
        }
        return rf;
    }

    private static Map<String, String> lowered(CaseInsensitiveStringMap options) {
        Map<String, String> known = new LinkedHashMap<>();
        for (String name : KNOWN) {
            known.put(name.toLowerCase(Locale.ROOT), name);
        }
        Map<String, String> out = new LinkedHashMap<>();
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            String k = e.getKey().toLowerCase(Locale.ROOT);
            out.put(k, e.getValue());
            if (!known.containsKey(k)) {
                unknown.add(k);
            }
        }
        if (!unknown.isEmpty()) {
            Collections.sort(unknown);
            throw new IllegalArgumentException("unknown option(s) " + String.join(", ", unknown)
                + " for the kraft source; known: " + String.join(", ", known.values()));
        }
        return out;
    }

    private static Long integer(Map<String, String> lowered, String name) {
        String text = lowered.get(name.toLowerCase(Locale.ROOT));
        if (text == null) {
            return null;
        }
        try {
            return Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + name + " must be an integer, got '" + text + "'");
        }
    }

    private static boolean bool(Map<String, String> lowered, String name) {
        String raw = lowered.get(name.toLowerCase(Locale.ROOT));
        String text = raw == null ? "false" : raw.strip().toLowerCase(Locale.ROOT);
        if (!text.equals("true") && !text.equals("false")) {
            throw new IllegalArgumentException("option " + name + " must be true or false, got '" + raw + "'");
        }
        return text.equals("true");
    }
}
