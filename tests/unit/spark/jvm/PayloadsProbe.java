package kraft.spark;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Test driver for {@link Payloads} (tests/unit/spark/jvm/test_payloads.py): reads tab-separated
 * commands from stdin, one per line, and prints one JSON line per command. Byte arguments are hex,
 * "-" for null. Strings are printed with every non-ASCII char as a \\uXXXX escape, so that Python
 * reads back exactly the UTF-16 the Java side produced (a lone surrogate shows as one).
 *
 * <pre>
 *   M value              -> [recordType, recordVersion or null, payload]
 *   C key value          -> [controlType, payload]
 *   P value              -> peekTypeName
 *   BENCH name rounds v1 v2 ... -> {"name":..,"nsPerRecord":..,"nsPerCachedRecord":..}
 * </pre>
 *
 * A value is handed over inside a larger buffer (junk before and after) so offsets are exercised.
 */
public final class PayloadsProbe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        Payloads payloads = new Payloads();
        String line;
        StringBuilder sb = new StringBuilder();
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            sb.setLength(0);
            switch (parts[0]) {
                case "M": {
                    byte[] v = unhex(parts[1]);
                    Payloads.Decoded d = v == null ? payloads.metadata(null, 0, -1)
                            : payloads.metadata(padded(v), 3, v.length);
                    sb.append('[');
                    str(sb, d.recordType);
                    sb.append(',');
                    if (d.recordVersion == -1) {
                        sb.append("null");
                    } else {
                        sb.append(d.recordVersion);
                    }
                    sb.append(',');
                    str(sb, d.payload);
                    sb.append(']');
                    break;
                }
                case "C": {
                    byte[] k = unhex(parts[1]);
                    byte[] v = unhex(parts[2]);
                    Payloads.Control c = payloads.control(
                            k == null ? null : padded(k), 3, k == null ? -1 : k.length,
                            v == null ? null : padded(v), 3, v == null ? -1 : v.length);
                    sb.append('[');
                    str(sb, c.controlType);
                    sb.append(',');
                    str(sb, c.payload);
                    sb.append(']');
                    break;
                }
                case "P": {
                    byte[] v = unhex(parts[1]);
                    str(sb, v == null ? Payloads.peekTypeName(null, 0, -1)
                            : Payloads.peekTypeName(padded(v), 3, v.length));
                    break;
                }
                case "BENCH":
                    bench(sb, parts);
                    break;
                default:
                    throw new IllegalArgumentException("unknown command " + parts[0]);
            }
            out.write(sb.toString());
            out.write('\n');
        }
        out.flush();
    }

    private static void bench(StringBuilder sb, String[] parts) {
        String name = parts[1];
        int rounds = Integer.parseInt(parts[2]);
        List<byte[]> values = new ArrayList<>();
        for (int i = 3; i < parts.length; i++) {
            values.add(unhex(parts[i]));
        }
        long sink = 0;
        long best = Long.MAX_VALUE;
        long bestCached = Long.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            Payloads p = new Payloads(); // a cold cache: every value is decoded
            long t0 = System.nanoTime();
            for (byte[] v : values) {
                Payloads.Decoded d = p.metadata(v, 0, v.length);
                sink += d.payload == null ? 1 : d.payload.length();
            }
            long t1 = System.nanoTime();
            for (byte[] v : values) {
                Payloads.Decoded d = p.metadata(v, 0, v.length);
                sink += d.payload == null ? 1 : d.payload.length();
            }
            long t2 = System.nanoTime();
            best = Math.min(best, t1 - t0);
            bestCached = Math.min(bestCached, t2 - t1);
        }
        sb.append("{\"name\":");
        str(sb, name);
        sb.append(",\"nsPerRecord\":").append((double) best / values.size());
        sb.append(",\"nsPerCachedRecord\":").append((double) bestCached / values.size());
        sb.append(",\"sink\":").append(sink).append('}');
    }

    private static byte[] padded(byte[] v) {
        byte[] buf = new byte[v.length + 5];
        buf[0] = 0x55;
        buf[1] = 1;
        buf[2] = (byte) 0xFF;
        System.arraycopy(v, 0, buf, 3, v.length);
        buf[v.length + 3] = 0;
        buf[v.length + 4] = 1;
        return buf;
    }

    private static byte[] unhex(String s) {
        if (s.equals("-")) {
            return null;
        }
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static void str(StringBuilder sb, String s) {
        if (s == null) {
            sb.append("null");
            return;
        }
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7E) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }
}
