package kraft.spark;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a path given to the reader designates: Java's twin of {@code kraft.spark.arrow_log.LogFiles}
 * and {@code locate}.
 *
 * <p>{@code segments}: (base offset, path) ascending; {@code snapshots}: (end offset, epoch, path)
 * ascending; {@code lastSegment}: the path of the partition directory's last segment (the one
 * that may have a torn tail), even when only one other file was asked for; {@code node}: the node
 * id of {@code meta.properties} in the metadata log directory, if there is one;
 * {@code singleFile}: the path was one file (a snapshot file given alone is read whatever
 * {@code includeSnapshots} says).
 *
 * <p>Python's {@code StorageError}s (a path that does not exist or is none of the accepted kinds,
 * an invalid {@code meta.properties}) are {@link IllegalArgumentException}s with the same message.
 */
public final class LogFiles implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String PARTITION_DIR = "__cluster_metadata-0";
    public static final String BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint";
    static final String META_PROPERTIES_FILE = "meta.properties";

    // Python's re: \d is any Unicode decimal digit and $ also matches before a final "\n";
    // lookingAt() anchors at the start only, as re.match does.
    private static final Pattern SEGMENT_NAME =
            Pattern.compile("^(\\d{20})\\.log$", Pattern.UNICODE_CHARACTER_CLASS | Pattern.UNIX_LINES);
    private static final Pattern SNAPSHOT_NAME =
            Pattern.compile("^(\\d{20})-(\\d{10})\\.checkpoint$", Pattern.UNICODE_CHARACTER_CLASS | Pattern.UNIX_LINES);

    /** A segment file: its base offset (from its name) and path. */
    public static final class Segment implements Serializable {
        private static final long serialVersionUID = 1L;
        public final long baseOffset;
        public final String path;

        Segment(long baseOffset, String path) {
            this.baseOffset = baseOffset;
            this.path = path;
        }

        @Override
        public String toString() {
            return "(" + baseOffset + ", " + path + ")";
        }
    }

    /** A snapshot file: its end offset and epoch (from its name) and path. */
    public static final class Snapshot implements Serializable {
        private static final long serialVersionUID = 1L;
        public final long endOffset;
        public final long epoch;
        public final String path;

        Snapshot(long endOffset, long epoch, String path) {
            this.endOffset = endOffset;
            this.epoch = epoch;
            this.path = path;
        }

        @Override
        public String toString() {
            return "(" + endOffset + ", " + epoch + ", " + path + ")";
        }
    }

    public final List<Segment> segments;
    public final List<Snapshot> snapshots;
    public final String lastSegment;
    public final Integer node;
    public final boolean singleFile;

    LogFiles(List<Segment> segments, List<Snapshot> snapshots, String lastSegment, Integer node, boolean singleFile) {
        this.segments = Collections.unmodifiableList(new ArrayList<>(segments));
        this.snapshots = Collections.unmodifiableList(new ArrayList<>(snapshots));
        this.lastSegment = lastSegment;
        this.node = node;
        this.singleFile = singleFile;
    }

    /**
     * The files of {@code path}: a node's {@code metadata.log.dir}, its {@code __cluster_metadata-0}
     * directory, or one segment ({@code <base offset>.log}), snapshot
     * ({@code <offset>-<epoch>.checkpoint}) or {@code bootstrap.checkpoint} file.
     *
     * @throws IllegalArgumentException the path does not exist or is none of these;
     *     {@code meta.properties} is invalid (Python's {@code StorageError}, same message)
     */
    public static LogFiles locate(String path) {
        Path p = Paths.get(path).toAbsolutePath().normalize();
        if (Files.isDirectory(p)) {
            Path partitionDir = Files.isDirectory(p.resolve(PARTITION_DIR)) ? p.resolve(PARTITION_DIR) : p;
            Listing listing = listDir(partitionDir);
            if (!name(partitionDir).equals(PARTITION_DIR) && listing.segments.isEmpty() && listing.snapshots.isEmpty()) {
                throw new IllegalArgumentException(p + " holds no " + PARTITION_DIR
                        + " directory and no segment or snapshot file: pass a node's metadata.log.dir, its "
                        + PARTITION_DIR + " directory, or one .log/.checkpoint file");
            }
            String last = listing.segments.isEmpty() ? null : listing.segments.get(listing.segments.size() - 1).path;
            return new LogFiles(listing.segments, listing.snapshots, last, nodeOf(parent(partitionDir)), false);
        }
        if (!Files.exists(p)) {
            throw new IllegalArgumentException(p + " does not exist");
        }
        String name = name(p);
        if (name.equals(BOOTSTRAP_SNAPSHOT)) {
            return new LogFiles(List.of(), List.of(new Snapshot(0, 0, p.toString())), null, nodeOf(parent(p)), true);
        }
        Matcher seg = SEGMENT_NAME.matcher(name);
        Matcher snap = SNAPSHOT_NAME.matcher(name);
        boolean isSegment = seg.lookingAt();
        boolean isSnapshot = !isSegment && snap.lookingAt();
        if (!isSegment && !isSnapshot) {
            throw new IllegalArgumentException(p + " is not a segment (<20-digit base offset>.log) or snapshot "
                    + "(<offset>-<epoch>.checkpoint, bootstrap.checkpoint) file");
        }
        Listing siblings = listDir(parent(p));
        String last = siblings.segments.isEmpty() ? null : siblings.segments.get(siblings.segments.size() - 1).path;
        Integer node = nodeOf(parent(parent(p)));
        if (isSegment) {
            return new LogFiles(List.of(new Segment(offsetOf(seg.group(1), p), p.toString())), List.of(), last, node,
                    true);
        }
        return new LogFiles(List.of(), List.of(new Snapshot(offsetOf(snap.group(1), p),
                new BigInteger(snap.group(2)).longValueExact(), p.toString())), last, node, true);
    }

    // ---------------------------------------------------------------------------------------------
    // Listing a directory

    static final class Listing {
        final List<Segment> segments = new ArrayList<>();
        final List<Snapshot> snapshots = new ArrayList<>();
    }

    /** The segment and snapshot files of {@code directory}, sorted as Python sorts its tuples. */
    static Listing listDir(Path directory) {
        Listing out = new Listing();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                String name = name(entry);
                Matcher m = SEGMENT_NAME.matcher(name);
                if (m.lookingAt()) {
                    out.segments.add(new Segment(offsetOf(m.group(1), entry), directory.resolve(name).toString()));
                    continue;
                }
                m = SNAPSHOT_NAME.matcher(name);
                if (m.lookingAt()) {
                    out.snapshots.add(new Snapshot(offsetOf(m.group(1), entry), new BigInteger(m.group(2)).longValueExact(),
                            directory.resolve(name).toString()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.segments.sort(Comparator.<Segment>comparingLong(s -> s.baseOffset)
                .thenComparing((a, b) -> compareCodePoints(a.path, b.path)));
        out.snapshots.sort(Comparator.<Snapshot>comparingLong(s -> s.endOffset).thenComparingLong(s -> s.epoch)
                .thenComparing((a, b) -> compareCodePoints(a.path, b.path)));
        return out;
    }

    /** The offset a file name gives (20 digits: it may not fit a long, which Python would take). */
    private static long offsetOf(String digits, Path file) {
        BigInteger value = new BigInteger(digits); // Character.digit: any Unicode decimal digit, as int()
        if (value.bitLength() > 63) {
            throw new IllegalArgumentException(file + ": the offset in the file name is out of range");
        }
        return value.longValue();
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    static String name(Path p) {
        Path n = p.getFileName();
        return n == null ? "" : n.toString();
    }

    /** Python's {@code Path.parent}: the root is its own parent. */
    static Path parent(Path p) {
        Path parent = p.getParent();
        return parent == null ? p : parent;
    }

    // ---------------------------------------------------------------------------------------------
    // meta.properties (kraft.storage.meta_properties.read_meta_properties, decode_meta_properties)

    /** The node id of {@code metadataDir/meta.properties}, or null where there is no such file. */
    static Integer nodeOf(Path metadataDir) {
        Path path = metadataDir.resolve(META_PROPERTIES_FILE);
        byte[] raw;
        try {
            raw = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            return null;
        } catch (AccessDeniedException e) {
            throw new IllegalArgumentException("cannot read " + path + ": [Errno 13] Permission denied: "
                    + Py.repr(path.toString()));
        } catch (IOException e) {
            if (Files.isDirectory(path)) {
                throw new IllegalArgumentException("cannot read " + path + ": [Errno 21] Is a directory: "
                        + Py.repr(path.toString()));
            }
            if (Files.notExists(path)) { // e.g. a parent that is not a directory
                return null;
            }
            throw new IllegalArgumentException("cannot read " + path + ": " + e.getMessage());
        }
        String problem = Py.utf8Problem(raw);
        if (problem != null) {
            throw new IllegalArgumentException("cannot read " + path + ": " + problem);
        }
        String text = new String(raw, java.nio.charset.StandardCharsets.UTF_8);
        return decodeNode(text, path.toString());
    }

    /** {@code decode_meta_properties(text, source=source).node_id}, with the same checks and errors. */
    static int decodeNode(String text, String source) {
        Map<String, String> props = parseProperties(text, source);
        String versionText = Py.strip(props.getOrDefault("version", ""));
        if (versionText.isEmpty()) {
            throw new IllegalArgumentException(source + ": version was not found");
        }
        if (versionText.equals("0")) {
            throw new IllegalArgumentException(source + ": version 0 is ZooKeeper mode; only KRaft (version 1) is supported");
        }
        if (!versionText.equals("1")) {
            throw new IllegalArgumentException(source + ": unsupported version " + Py.repr(versionText) + ", expected 1");
        }
        for (String key : new String[] {"cluster.id", "node.id"}) {
            if (Py.strip(props.getOrDefault(key, "")).isEmpty()) {
                throw new IllegalArgumentException(source + ": " + key + " was not found");
            }
        }
        String nodeText = props.get("node.id");
        BigInteger nodeId = Py.parseInt(nodeText);
        if (nodeId == null) {
            throw new IllegalArgumentException(source + ": unable to read node.id " + Py.repr(nodeText)
                    + " as a base-10 number");
        }
        if (nodeId.signum() < 0) {
            throw new IllegalArgumentException(source + ": node.id must not be negative, got " + nodeId);
        }
        if (props.containsKey("directory.id")) {
            String problem = uuidProblem(Py.strip(props.get("directory.id")));
            if (problem != null) {
                throw new IllegalArgumentException(source + ": unable to read directory.id as a Uuid: " + problem);
            }
        }
        if (nodeId.bitLength() > 31) {
            // Python reads it, and fails later writing the int32 node column.
            throw new IllegalArgumentException(source + ": node.id " + nodeId + " does not fit the node column (int32)");
        }
        return nodeId.intValue();
    }

    /** {@code kraft.common.config.parse_properties}: Java properties as Python parses them. */
    static Map<String, String> parseProperties(String text, String source) {
        Map<String, String> props = new LinkedHashMap<>();
        int n = 0;
        for (String line : logicalLines(text)) {
            n++;
            String[] kv = splitKey(line);
            String key = kv[0];
            String where = source + ": entry " + n + " (" + Py.repr(key.isEmpty() ? line : key) + ")"; // {key or line!r}
            props.put(unescape(key, where), unescape(kv[1], where));
        }
        return props;
    }

    private static List<String> logicalLines(String text) {
        List<String> out = new ArrayList<>();
        String pending = null;
        for (String raw : Py.splitlines(text)) {
            String line = lstripBlanks(raw);
            if (pending == null && (line.isEmpty() || line.charAt(0) == '#' || line.charAt(0) == '!')) {
                continue;
            }
            if (pending != null) {
                line = pending + line;
            }
            int trailing = 0;
            while (trailing < line.length() && line.charAt(line.length() - 1 - trailing) == '\\') {
                trailing++;
            }
            if (trailing % 2 == 1) {
                pending = line.substring(0, line.length() - 1);
                continue;
            }
            pending = null;
            out.add(line);
        }
        if (pending != null) {
            out.add(pending);
        }
        return out;
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t' || c == '\f';
    }

    private static String lstripBlanks(String s) {
        int i = 0;
        while (i < s.length() && isBlank(s.charAt(i))) {
            i++;
        }
        return s.substring(i);
    }

    private static String[] splitKey(String line) {
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == '=' || c == ':' || isBlank(c)) {
                break;
            }
            i++;
        }
        String key = line.substring(0, Math.min(i, line.length()));
        String rest = lstripBlanks(line.substring(Math.min(i, line.length())));
        if (!rest.isEmpty() && (rest.charAt(0) == '=' || rest.charAt(0) == ':')) {
            rest = lstripBlanks(rest.substring(1));
        }
        return new String[] {key, rest};
    }

    private static String unescape(String s, String where) {
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != '\\') {
                out.append(c);
                i++;
                continue;
            }
            i++;
            if (i >= s.length()) {
                break;
            }
            c = s.charAt(i);
            if (c == 'u') {
                String digits = s.substring(Math.min(i + 1, s.length()), Math.min(i + 5, s.length()));
                boolean ok = Py.length(digits) == 4;
                for (int k = 0; ok && k < digits.length(); k++) {
                    ok = "0123456789abcdefABCDEF".indexOf(digits.charAt(k)) >= 0;
                }
                if (!ok) {
                    throw new IllegalArgumentException(where + ": malformed \\u escape");
                }
                out.append((char) Integer.parseInt(digits, 16));
                i += 5;
                continue;
            }
            switch (c) {
                case 't': out.append('\t'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 'f': out.append('\f'); break;
                default: out.append(c);
            }
            i++;
        }
        return out.toString();
    }

    /** {@code kraft.common.uuids.uuid_from_base64}'s error for {@code text}, or null if it is a Uuid. */
    static String uuidProblem(String text) {
        int len = Py.length(text);
        if (len != 22) {
            return "'" + text + "' is not a base64 UUID: expected 22 characters, got " + len;
        }
        byte[] raw = Py.b64decodeStrict(text);
        if (raw == null) {
            return "'" + text + "' is not a base64url UUID";
        }
        if (raw.length != 16 || !Base64.getUrlEncoder().withoutPadding().encodeToString(raw).equals(text)) {
            return "'" + text + "' is not a canonical base64url UUID";
        }
        return null;
    }

    @Override
    public String toString() {
        return "LogFiles(segments=" + segments + ", snapshots=" + snapshots + ", last_segment=" + lastSegment
                + ", node=" + node + ", single_file=" + singleFile + ")";
    }

    // ---------------------------------------------------------------------------------------------

    /** The bits of Python's str, int and bytes behaviour that the checks above rely on. */
    static final class Py {
        private Py() {
        }

        /** Python's str.isspace() for one code point. */
        static boolean isSpace(int c) {
            switch (c) {
                case '\t': case '\n': case 0x0b: case '\f': case '\r': case 0x1c: case 0x1d: case 0x1e: case 0x1f:
                case ' ': case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f:
                case 0x3000:
                    return true;
                default:
                    return c >= 0x2000 && c <= 0x200a;
            }
        }

        /** Python's str.strip() (no argument). */
        static String strip(String s) {
            int i = 0;
            int j = s.length();
            while (i < j && isSpace(s.charAt(i))) {
                i++;
            }
            while (j > i && isSpace(s.charAt(j - 1))) {
                j--;
            }
            return s.substring(i, j);
        }

        /** len() of a Python str: code points. */
        static int length(String s) {
            return s.codePointCount(0, s.length());
        }

        /** Python's str.splitlines(). */
        static List<String> splitlines(String s) {
            List<String> out = new ArrayList<>();
            int start = 0;
            int i = 0;
            while (i < s.length()) {
                char c = s.charAt(i);
                boolean brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d || c == 0x1e
                        || c == 0x85 || c == 0x2028 || c == 0x2029;
                if (!brk) {
                    i++;
                    continue;
                }
                out.add(s.substring(start, i));
                i += (c == '\r' && i + 1 < s.length() && s.charAt(i + 1) == '\n') ? 2 : 1;
                start = i;
            }
            if (start < s.length()) {
                out.add(s.substring(start));
            }
            return out;
        }

        /** Python's int(text) in base 10, or null where it raises ValueError. */
        static BigInteger parseInt(String text) {
            String s = strip(text);
            if (Py.length(s) > 4300) {
                return null; // sys.int_info.str_digits_check_threshold: int() refuses longer strings
            }
            int i = 0;
            boolean negative = false;
            if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                negative = s.charAt(i) == '-';
                i++;
            }
            StringBuilder digits = new StringBuilder();
            boolean lastWasDigit = false;
            while (i < s.length()) {
                int c = s.codePointAt(i);
                i += Character.charCount(c);
                if (c == '_') {
                    if (!lastWasDigit) {
                        return null;
                    }
                    lastWasDigit = false;
                    continue;
                }
                if (Character.getType(c) != Character.DECIMAL_DIGIT_NUMBER) {
                    return null;
                }
                digits.append((char) ('0' + Character.digit(c, 10)));
                lastWasDigit = true;
            }
            if (!lastWasDigit) {
                return null;
            }
            BigInteger v = new BigInteger(digits.toString());
            return negative ? v.negate() : v;
        }

        /** Python's repr() of a str. */
        static String repr(String s) {
            char quote = (s.indexOf('\'') >= 0 && s.indexOf('"') < 0) ? '"' : '\'';
            StringBuilder out = new StringBuilder(s.length() + 2).append(quote);
            for (int i = 0; i < s.length(); ) {
                int c = s.codePointAt(i);
                i += Character.charCount(c);
                if (c == quote || c == '\\') {
                    out.append('\\').appendCodePoint(c);
                } else if (c == '\t') {
                    out.append("\\t");
                } else if (c == '\n') {
                    out.append("\\n");
                } else if (c == '\r') {
                    out.append("\\r");
                } else if (c < 0x20 || c == 0x7f) {
                    out.append(String.format("\\x%02x", c));
                } else if (c < 0x7f || isPrintable(c)) {
                    out.appendCodePoint(c);
                } else if (c <= 0xff) {
                    out.append(String.format("\\x%02x", c));
                } else if (c <= 0xffff) {
                    out.append(String.format("\\u%04x", c));
                } else {
                    out.append(String.format("\\U%08x", c));
                }
            }
            return out.append(quote).toString();
        }

        private static boolean isPrintable(int c) {
            switch (Character.getType(c)) {
                case Character.CONTROL:
                case Character.FORMAT:
                case Character.SURROGATE:
                case Character.PRIVATE_USE:
                case Character.UNASSIGNED:
                case Character.LINE_SEPARATOR:
                case Character.PARAGRAPH_SEPARATOR:
                case Character.SPACE_SEPARATOR:
                    return c == ' ';
                default:
                    return true;
            }
        }

        /** The text of the UnicodeDecodeError bytes.decode("utf-8") raises, or null if it decodes. */
        static String utf8Problem(byte[] b) {
            int n = b.length;
            int i = 0;
            while (i < n) {
                int ch = b[i] & 0xff;
                if (ch < 0x80) {
                    i++;
                    continue;
                }
                int bad; // bytes in the error range
                String reason;
                if (ch < 0xc2 || ch > 0xf4) {
                    bad = 1;
                    reason = "invalid start byte";
                } else if (ch < 0xe0) {
                    if (n - i < 2) {
                        bad = n - i;
                        reason = "unexpected end of data";
                    } else if (!cont(b[i + 1])) {
                        bad = 1;
                        reason = "invalid continuation byte";
                    } else {
                        i += 2;
                        continue;
                    }
                } else if (ch < 0xf0) {
                    if (n - i < 3) {
                        if (n - i < 2) {
                            bad = n - i;
                            reason = "unexpected end of data";
                        } else {
                            int ch2 = b[i + 1] & 0xff;
                            if (!cont(b[i + 1]) || (ch2 < 0xa0 ? ch == 0xe0 : ch == 0xed)) {
                                bad = 1;
                                reason = "invalid continuation byte";
                            } else {
                                bad = n - i;
                                reason = "unexpected end of data";
                            }
                        }
                    } else {
                        int ch2 = b[i + 1] & 0xff;
                        if (!cont(b[i + 1]) || (ch == 0xe0 && ch2 < 0xa0) || (ch == 0xed && ch2 >= 0xa0)) {
                            bad = 1;
                            reason = "invalid continuation byte";
                        } else if (!cont(b[i + 2])) {
                            bad = 2;
                            reason = "invalid continuation byte";
                        } else {
                            i += 3;
                            continue;
                        }
                    }
                } else {
                    if (n - i < 4) {
                        if (n - i < 2) {
                            bad = n - i;
                            reason = "unexpected end of data";
                        } else {
                            int ch2 = b[i + 1] & 0xff;
                            if (!cont(b[i + 1]) || (ch2 < 0x90 ? ch == 0xf0 : ch == 0xf4)) {
                                bad = 1;
                                reason = "invalid continuation byte";
                            } else if (n - i >= 3 && !cont(b[i + 2])) {
                                bad = 2;
                                reason = "invalid continuation byte";
                            } else {
                                bad = n - i;
                                reason = "unexpected end of data";
                            }
                        }
                    } else {
                        int ch2 = b[i + 1] & 0xff;
                        if (!cont(b[i + 1]) || (ch == 0xf0 && ch2 < 0x90) || (ch == 0xf4 && ch2 >= 0x90)) {
                            bad = 1;
                            reason = "invalid continuation byte";
                        } else if (!cont(b[i + 2])) {
                            bad = 2;
                            reason = "invalid continuation byte";
                        } else if (!cont(b[i + 3])) {
                            bad = 3;
                            reason = "invalid continuation byte";
                        } else {
                            i += 4;
                            continue;
                        }
                    }
                }
                if (bad == 1) {
                    return String.format("'utf-8' codec can't decode byte 0x%02x in position %d: %s", ch, i, reason);
                }
                return String.format("'utf-8' codec can't decode bytes in position %d-%d: %s", i, i + bad - 1, reason);
            }
            return null;
        }

        private static boolean cont(byte x) {
            return (x & 0xc0) == 0x80;
        }

        /**
         * {@code base64.b64decode(text + "==", altchars=b"-_", validate=True)} (Python 3.11's strict
         * {@code binascii.a2b_base64}), or null where it raises.
         */
        static byte[] b64decodeStrict(String text) {
            String s = text + "==";
            for (int i = 0; i < s.length(); i++) {
                if (s.charAt(i) > 0x7f) {
                    return null; // "string argument should contain only ASCII characters"
                }
            }
            if (s.charAt(0) == '=') {
                return null; // Leading padding not allowed
            }
            byte[] out = new byte[s.length()];
            int n = 0;
            int quadPos = 0;
            int leftChar = 0;
            int pads = 0;
            boolean paddingStarted = false;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '-') {
                    c = '+';
                } else if (c == '_') {
                    c = '/';
                }
                if (c == '=') {
                    paddingStarted = true;
                    if (quadPos >= 2 && quadPos + ++pads >= 4) {
                        if (i + 1 < s.length()) {
                            return null; // Excess data after padding
                        }
                        return java.util.Arrays.copyOf(out, n);
                    }
                    continue;
                }
                int v = b64(c);
                if (v < 0) {
                    return null; // Only base64 data is allowed
                }
                if (paddingStarted) {
                    return null; // Discontinuous padding not allowed
                }
                pads = 0;
                switch (quadPos) {
                    case 0:
                        quadPos = 1;
                        leftChar = v;
                        break;
                    case 1:
                        quadPos = 2;
                        out[n++] = (byte) ((leftChar << 2) | (v >> 4));
                        leftChar = v & 0x0f;
                        break;
                    case 2:
                        quadPos = 3;
                        out[n++] = (byte) ((leftChar << 4) | (v >> 2));
                        leftChar = v & 0x03;
                        break;
                    default:
                        quadPos = 0;
                        out[n++] = (byte) ((leftChar << 6) | v);
                        leftChar = 0;
                }
            }
            if (quadPos != 0) {
                return null; // Incorrect padding / invalid number of data characters
            }
            return java.util.Arrays.copyOf(out, n);
        }

        private static int b64(char c) {
            if (c >= 'A' && c <= 'Z') {
                return c - 'A';
            }
            if (c >= 'a' && c <= 'z') {
                return c - 'a' + 26;
            }
            if (c >= '0' && c <= '9') {
                return c - '0' + 52;
            }
            if (c == '+') {
                return 62;
            }
            if (c == '/') {
                return 63;
            }
            return -1;
        }
    }
}
