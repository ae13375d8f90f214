package kraft.spark;

/**
 * Where a {@link UnitReader} puts the rows it decodes (the columns of
 * {@code kraft.spark.columns.RECORD_SCHEMA} that vary per row; from_snapshot, node and file are
 * the same for a whole read unit and are filled by the sink's owner).
 *
 * <p>Byte ranges are only valid during the call: a sink copies what it keeps.
 */
public interface RowSink {
    /**
     * One row.
     *
     * @param timestampMs the record's timestamp in milliseconds (the column is microseconds, UTC)
     * @param controlType null for a data record
     * @param recordType null when the value is not a metadata record (or for a control record)
     * @param recordVersion -1 for null
     * @param keyLen -1 for a null key ({@code keyBuf} may then be null); likewise {@code valueLen}
     * @param payload null when there is none
     */
    void row(long offset, int leaderEpoch, long batchBaseOffset, long timestampMs, boolean isControl,
             String controlType, String recordType, int recordVersion,
             byte[] keyBuf, int keyOff, int keyLen,
             byte[] valueBuf, int valueOff, int valueLen,
             String payload);

    /** Rows added since the sink was last emptied (the reader stops a step once it has enough). */
    int rows();
}
