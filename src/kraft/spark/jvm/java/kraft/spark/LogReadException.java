package kraft.spark;

/**
 * A file of the log cannot be read as it is: corrupt, missing data, or gone (Python's
 * {@code kraft.spark.arrow_log.LogReadError}, same messages). {@code position} and {@code offset}
 * are -1 when unknown.
 */
public final class LogReadException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    public final String file;
    public final long position;
    public final long offset;

    public LogReadException(String message, String file, long position, long offset) {
        super(message);
        this.file = file;
        this.position = position;
        this.offset = offset;
    }

    public LogReadException(String message, String file) {
        this(message, file, -1, -1);
    }
}
