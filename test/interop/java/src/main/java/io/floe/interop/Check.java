package io.floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.ResolvingFileIO;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Independent Apache Iceberg Java reader for the Floe interop suite. It takes the same arguments
 * as pyiceberg_check.py:
 *
 * <pre>
 *   --metadata-location URL   s3://... or file:///... metadata.json of the table
 *   --expect FILE             JSON: table, columns, ranges {"topic/partition": [start, end]},
 *                             key_field, header_key, append_delta_equals_records
 *   --mode table|metadata-dir table: scan the table and check every offset is there once;
 *                             metadata-dir: parse every *.metadata.json beside it
 *   --s3-endpoint URL --s3-access-key K --s3-secret-key S --s3-region R
 * </pre>
 *
 * Exits 0 and prints one OK line when every check passes; otherwise prints each problem and exits 1.
 */
public final class Check {
  private static final int MAX_PROBLEMS = 20;

  private final List<String> problems = new ArrayList<>();
  private final ObjectMapper json = new ObjectMapper();

  private String location;
  // --rest-uri/--rest-table: load the table through an Iceberg REST catalog
  // (RESTCatalog) instead of from a metadata location (interop scenario 9).
  private String restUri;
  private String restToken;
  private String restTable;
  private String mode = "table";
  private JsonNode expect;
  private final Map<String, String> ioProps = new HashMap<>();
  private ResolvingFileIO io;

  public static void main(String[] args) throws Exception {
    Check c = new Check();
    int rc;
    try {
      rc = c.run(args);
    } catch (Exception e) {
      System.err.println("FAIL iceberg-java: " + e);
      e.printStackTrace(System.err);
      rc = 1;
    }
    System.exit(rc);
  }

  private void problem(String msg) {
    problems.add(msg);
  }

  private int run(String[] args) throws Exception {
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = i + 1 < args.length ? args[i + 1] : null;
      switch (a) {
        case "--metadata-location": location = v; i++; break;
        case "--expect": expect = json.readTree(new File(v)); i++; break;
        case "--mode": mode = v; i++; break;
        case "--rest-uri": restUri = v; i++; break;
        case "--rest-token": restToken = v; i++; break;
        case "--rest-table": restTable = v; i++; break;
        case "--s3-endpoint": ioProps.put("s3.endpoint", v); ioProps.put("s3.path-style-access", "true"); i++; break;
        case "--s3-access-key": ioProps.put("s3.access-key-id", v); i++; break;
        case "--s3-secret-key": ioProps.put("s3.secret-access-key", v); i++; break;
        case "--s3-region": ioProps.put("client.region", v); i++; break;
        default:
          System.err.println("iceberg-java: unknown argument " + a);
          return 2;
      }
    }
    if (restUri != null && location == null) {
      location = "rest:" + restTable;
    }
    if (location == null || expect == null) {
      System.err.println("iceberg-java: --metadata-location and --expect are required");
      return 2;
    }
    io = new ResolvingFileIO();
    io.setConf(new Configuration());
    io.initialize(ioProps);

    String name = expect.path("table").asText("table");
    String summary;
    if ("table".equals(mode)) {
      summary = checkTable(name);
    } else if ("metadata-dir".equals(mode)) {
      summary = checkMetadataDir(name);
    } else {
      System.err.println("iceberg-java: unknown --mode " + mode);
      return 2;
    }
    io.close();
    if (!problems.isEmpty()) {
      System.out.println("FAIL iceberg-java " + mode + " " + name + " (" + location + "): " + problems.size() + " problem(s)");
      for (int i = 0; i < Math.min(problems.size(), MAX_PROBLEMS); i++) {
        System.out.println("  - " + problems.get(i));
      }
      if (problems.size() > MAX_PROBLEMS) {
        System.out.println("  ... and " + (problems.size() - MAX_PROBLEMS) + " more");
      }
      return 1;
    }
    // Through a REST catalog, the metadata location it returned (scenario 9 compares it).
    String at = restUri != null ? " (" + location + ")" : "";
    System.out.println("OK iceberg-java " + mode + " " + name + at + ": " + summary);
    return 0;
  }

  /** Expected [start, end) per "topic/partition". */
  private Map<String, long[]> ranges() {
    Map<String, long[]> out = new TreeMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = expect.path("ranges").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), new long[] {e.getValue().get(0).asLong(), e.getValue().get(1).asLong()});
    }
    return out;
  }

  // ---------------------------------------------------------------- table mode

  private String checkTable(String name) throws Exception {
    Table table;
    if (restUri != null) {
      Map<String, String> props = new HashMap<>(ioProps);
      props.put("uri", restUri);
      props.put("header.X-Floe-Consistency", "strong");
      if (restToken != null) {
        props.put("token", restToken);
      }
      RESTCatalog rest = new RESTCatalog();
      rest.initialize("floe", props);
      table = rest.loadTable(TableIdentifier.parse(restTable));
      location = ((HasTableOperations) table).operations().current().metadataFileLocation();
    } else {
      table = new BaseTable(new StaticTableOperations(location, io), name);
    }
    Schema schema = table.schema();
    checkSchema(schema);
    if (!problems.isEmpty()) {
      return "";
    }

    Map<String, long[]> ranges = ranges();
    Map<String, BitSet> seen = new HashMap<>();
    for (String k : ranges.keySet()) {
      seen.put(k, new BitSet());
    }
    String keyField = expect.path("key_field").asText("");
    String headerKey = expect.path("header_key").asText("");
    long rows = 0;
    long dups = 0;
    long strays = 0;
    long keyMismatch = 0;
    long headerMismatch = 0;
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).build()) {
      for (Record r : it) {
        rows++;
        String topic = (String) r.getField("_kafka_topic");
        Integer part = (Integer) r.getField("_kafka_partition");
        Long off = (Long) r.getField("_kafka_offset");
        if (topic == null || part == null || off == null) {
          problem("row " + rows + " has a null topic, partition or offset");
          continue;
        }
        String tp = topic + "/" + part;
        long[] rg = ranges.get(tp);
        if (rg == null || off < rg[0] || off >= rg[1]) {
          if (++strays <= 5) {
            problem("offset " + tp + "@" + off + " is outside the produced range " + (rg == null ? "(no such partition)" : "[" + rg[0] + "," + rg[1] + ")"));
          }
          continue;
        }
        BitSet bs = seen.get(tp);
        int idx = (int) (off - rg[0]);
        if (bs.get(idx)) {
          if (++dups <= 5) {
            problem("offset " + tp + "@" + off + " appears more than once");
          }
          continue;
        }
        bs.set(idx);
        ByteBuffer keyBuf = (ByteBuffer) r.getField("_kafka_key");
        String key = keyBuf == null ? null : StandardCharsets.UTF_8.decode(keyBuf.duplicate()).toString();
        if (!keyField.isEmpty()) {
          Object payload = r.getField(keyField);
          if (key == null || payload == null || !key.equals(payload.toString())) {
            if (++keyMismatch <= 5) {
              problem("row " + tp + "@" + off + ": _kafka_key " + key + " does not match payload field " + keyField + "=" + payload);
            }
          }
        }
        if (!keyField.isEmpty() && expect.has("values")) {
          checkValues(r, String.valueOf(r.getField(keyField)), schema);
        }
        if (!headerKey.isEmpty()) {
          @SuppressWarnings("unchecked")
          List<Record> headers = (List<Record>) r.getField("_kafka_headers");
          String hv = null;
          if (headers != null) {
            for (Record h : headers) {
              if (headerKey.equals(h.getField("key"))) {
                ByteBuffer b = (ByteBuffer) h.getField("value");
                hv = b == null ? null : StandardCharsets.UTF_8.decode(b.duplicate()).toString();
              }
            }
          }
          if (hv == null || !hv.equals(key)) {
            if (++headerMismatch <= 5) {
              problem("row " + tp + "@" + off + ": header " + headerKey + "=" + hv + " does not match key " + key);
            }
          }
        }
      }
    }
    if (dups > 5) problem(dups + " duplicate offsets in all");
    if (strays > 5) problem(strays + " offsets outside the produced ranges in all");
    if (keyMismatch > 5) problem(keyMismatch + " rows whose key does not match the payload in all");
    if (headerMismatch > 5) problem(headerMismatch + " rows whose header does not match the key in all");

    long expected = 0;
    for (Map.Entry<String, long[]> e : ranges.entrySet()) {
      long[] rg = e.getValue();
      expected += rg[1] - rg[0];
      int have = seen.get(e.getKey()).cardinality();
      long want = rg[1] - rg[0];
      if (have != want) {
        int firstMissing = seen.get(e.getKey()).nextClearBit(0);
        problem(e.getKey() + ": " + have + " of " + want + " offsets in [" + rg[0] + "," + rg[1] + ") present; first missing " + (rg[0] + firstMissing));
      }
    }
    if (rows != expected) {
      problem("table has " + rows + " rows, expected " + expected);
    }
    if (expect.has("values") && valueRowsSeen != expect.path("values").size()) {
      problem(valueRowsSeen + " of the " + expect.path("values").size() + " rows with expected values found");
    }

    Snapshot snap = table.currentSnapshot();
    if (snap == null) {
      if (expected > 0) problem("table has no current snapshot");
    } else {
      checkOffsetsSummary(snap, ranges);
      String total = snap.summary().get("total-records");
      if (total != null && Long.parseLong(total) != expected) {
        problem("snapshot summary total-records=" + total + ", expected " + expected);
      }
    }
    return "rows=" + rows + " partitions=" + ranges.size() + " snapshot=" + (snap == null ? "none" : snap.snapshotId())
        + " columns=" + schema.columns().size();
  }

  /** expect.values: {key: {column: normalized value}}, for the row whose key field is key. */
  private void checkValues(Record r, String key, Schema schema) {
    JsonNode want = expect.path("values").path(key);
    if (want.isMissingNode()) {
      return;
    }
    valueRowsSeen++;
    Iterator<Map.Entry<String, JsonNode>> cols = want.fields();
    while (cols.hasNext()) {
      Map.Entry<String, JsonNode> e = cols.next();
      Object v = schema.findField(e.getKey()) == null ? null : r.getField(e.getKey());
      String got = normalize(v);
      String w = e.getValue().isNull() ? null : e.getValue().asText();
      if (got == null ? w != null : !got.equals(w)) {
        problem("row " + key + ": column " + e.getKey() + " = " + got + ", expected " + w);
      }
    }
  }

  private int valueRowsSeen;

  /** A value as the expectations write it (see pyiceberg_check.py normalize). */
  private static String normalize(Object v) {
    if (v == null) {
      return null;
    }
    if (v instanceof java.math.BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof java.time.OffsetDateTime t) {
      return Long.toString(java.time.temporal.ChronoUnit.MICROS.between(java.time.Instant.EPOCH, t.toInstant()));
    }
    if (v instanceof java.time.LocalDateTime t) {
      return Long.toString(java.time.temporal.ChronoUnit.MICROS.between(java.time.LocalDateTime.of(1970, 1, 1, 0, 0), t));
    }
    if (v instanceof java.time.LocalTime t) {
      return Long.toString(t.toNanoOfDay() / 1000);
    }
    if (v instanceof ByteBuffer b) {
      ByteBuffer d = b.duplicate();
      byte[] out = new byte[d.remaining()];
      d.get(out);
      return hex(out);
    }
    if (v instanceof byte[] b) {
      return hex(b);
    }
    return v.toString();
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }

  private void checkSchema(Schema schema) {
    for (JsonNode c : expect.path("columns")) {
      if (schema.findField(c.asText()) == null) {
        problem("schema lacks column " + c.asText() + "; schema is " + schema.asStruct());
      }
    }
    Iterator<Map.Entry<String, JsonNode>> types = expect.path("column_types").fields();
    while (types.hasNext()) {
      Map.Entry<String, JsonNode> e = types.next();
      Types.NestedField f = schema.findField(e.getKey());
      if (f == null) {
        problem("schema lacks column " + e.getKey() + " (expected " + e.getValue().asText() + ")");
      } else if (!f.type().toString().equals(e.getValue().asText())) {
        problem("column " + e.getKey() + " is " + f.type() + ", expected " + e.getValue().asText());
      }
    }
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("_kafka_topic", "string");
    meta.put("_kafka_partition", "int");
    meta.put("_kafka_offset", "long");
    meta.put("_kafka_timestamp", "timestamptz");
    meta.put("_kafka_key", "binary");
    for (Map.Entry<String, String> e : meta.entrySet()) {
      Types.NestedField f = schema.findField(e.getKey());
      if (f == null) {
        problem("schema lacks metadata column " + e.getKey());
      } else if (!f.type().toString().equals(e.getValue())) {
        problem("metadata column " + e.getKey() + " is " + f.type() + ", expected " + e.getValue());
      }
    }
    Types.NestedField h = schema.findField("_kafka_headers");
    if (h == null) {
      problem("schema lacks metadata column _kafka_headers");
    } else {
      Type t = h.type();
      boolean ok = t.isListType() && t.asListType().elementType().isStructType();
      if (ok) {
        Types.StructType st = t.asListType().elementType().asStructType();
        ok = st.field("key") != null && st.field("key").type().equals(Types.StringType.get())
            && st.field("value") != null && st.field("value").type().equals(Types.BinaryType.get());
      }
      if (!ok) problem("metadata column _kafka_headers is " + t + ", expected list<struct<key: string, value: binary>>");
    }
  }

  private Map<String, Long> floeOffsets(Snapshot snap, String where) {
    Map<String, String> s = snap.summary();
    String raw = s == null ? null : s.get("floe.offsets");
    if (raw == null) {
      problem(where + ": snapshot " + snap.snapshotId() + " summary lacks floe.offsets");
      return null;
    }
    if (s.get("floe.commit-id") == null || s.get("floe.commit-id").isEmpty()) {
      problem(where + ": snapshot " + snap.snapshotId() + " summary lacks floe.commit-id");
    }
    try {
      JsonNode n = json.readTree(raw);
      if (!n.isObject()) throw new IllegalArgumentException("not an object");
      Map<String, Long> out = new TreeMap<>();
      Iterator<Map.Entry<String, JsonNode>> it = n.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().canConvertToLong() || !e.getValue().isIntegralNumber()) {
          throw new IllegalArgumentException(e.getKey() + " is not an integer");
        }
        out.put(e.getKey(), e.getValue().asLong());
      }
      return out;
    } catch (Exception e) {
      problem(where + ": snapshot " + snap.snapshotId() + " floe.offsets " + raw + " is not a JSON object of offsets: " + e.getMessage());
      return null;
    }
  }

  private void checkOffsetsSummary(Snapshot snap, Map<String, long[]> ranges) {
    Map<String, Long> offs = floeOffsets(snap, "current snapshot");
    if (offs == null) return;
    for (Map.Entry<String, long[]> e : ranges.entrySet()) {
      Long got = offs.get(e.getKey());
      long want = e.getValue()[1];
      if (got == null ? want != e.getValue()[0] : got != want) {
        problem("floe.offsets[" + e.getKey() + "]=" + got + ", expected " + want);
      }
    }
    for (String k : offs.keySet()) {
      if (!ranges.containsKey(k)) problem("floe.offsets has unexpected partition " + k);
    }
  }

  // ---------------------------------------------------------------- metadata-dir mode

  private String checkMetadataDir(String name) {
    String dir = location.substring(0, location.lastIndexOf('/') + 1);
    List<String> files = new ArrayList<>();
    for (FileInfo fi : io.listPrefix(dir)) {
      if (fi.location().endsWith(".metadata.json")) files.add(fi.location());
    }
    files.sort(null);
    if (files.isEmpty()) {
      problem("no *.metadata.json under " + dir);
      return "";
    }
    boolean currentListed = false;
    for (String f : files) {
      if (f.equals(location) || f.endsWith(location.substring(location.indexOf("://") + 3))) currentListed = true;
    }
    if (!currentListed) problem("the current metadata " + location + " is not among the files listed under " + dir);

    Map<Long, String> offsetsBySnapshot = new HashMap<>();
    int snapshots = 0;
    TableMetadata current = null;
    for (String f : files) {
      TableMetadata md;
      try {
        md = TableMetadataParser.read(io, f);
      } catch (Exception e) {
        problem(f + ": TableMetadataParser rejects it: " + e);
        continue;
      }
      if (f.equals(location)) current = md;
      Set<String> commitIds = new HashSet<>();
      for (Snapshot s : md.snapshots()) {
        snapshots++;
        String where = f.substring(f.lastIndexOf('/') + 1);
        Map<String, Long> offs = floeOffsets(s, where);
        if (offs == null) continue;
        String cid = s.summary().get("floe.commit-id");
        if (cid != null && !commitIds.add(cid)) {
          problem(where + ": floe.commit-id " + cid + " is on more than one snapshot");
        }
        String prev = offsetsBySnapshot.putIfAbsent(s.snapshotId(), offs.toString());
        if (prev != null && !prev.equals(offs.toString())) {
          problem("snapshot " + s.snapshotId() + " has floe.offsets " + prev + " in one metadata file and " + offs + " in " + where);
        }
      }
    }
    if (current == null) {
      try {
        current = TableMetadataParser.read(io, location);
      } catch (Exception e) {
        problem(location + ": TableMetadataParser rejects it: " + e);
      }
    }
    if (current != null) checkHistory(current);
    return files.size() + " metadata files parsed, " + snapshots + " snapshot entries carry floe.offsets";
  }

  /** Along the current metadata's snapshots, each snapshot's offsets never go back from its
   * parent's (a first snapshot's parent offsets are the ranges' starts), and (optionally) every
   * append adds exactly as many records as its offsets advance. A replace snapshot (Floe's
   * compaction) keeps its parent's offsets and (optionally) its records: added = deleted, and
   * total-records equal to the parent's. A snapshot whose parent was
   * expired has nothing to compare with and is skipped. */
  private void checkHistory(TableMetadata md) {
    boolean strict = expect.path("append_delta_equals_records").asBoolean(false);
    Map<String, Long> start = new TreeMap<>();
    for (Map.Entry<String, long[]> e : ranges().entrySet()) start.put(e.getKey(), e.getValue()[0]);
    Map<Long, Map<String, Long>> byId = new HashMap<>();
    for (Snapshot s : md.snapshots()) {
      Map<String, Long> offs = floeOffsets(s, "history");
      if (offs != null) byId.put(s.snapshotId(), offs);
    }
    for (Snapshot s : md.snapshots()) {
      Map<String, Long> offs = byId.get(s.snapshotId());
      if (offs == null) continue;
      Map<String, Long> base;
      if (s.parentId() == null) {
        // A first snapshot starts from the ranges' starts. Expiry may also leave a later
        // snapshot without a parent: one that did not start an empty table is skipped.
        String total = s.summary().get("total-records");
        String added = s.summary().get("added-records");
        if (total == null || !total.equals(added)) continue;
        base = start;
      } else if (byId.containsKey(s.parentId())) {
        base = byId.get(s.parentId());
      } else {
        continue; // parent expired (or lacks offsets, reported above)
      }
      long delta = 0;
      for (Map.Entry<String, Long> e : offs.entrySet()) {
        long p = base.getOrDefault(e.getKey(), start.getOrDefault(e.getKey(), 0L));
        if (e.getValue() < p) {
          problem("snapshot " + s.snapshotId() + " moves " + e.getKey() + " back from " + p + " to " + e.getValue());
        }
        delta += e.getValue() - p;
      }
      for (String k : base.keySet()) {
        if (!offs.containsKey(k) && base.get(k) > start.getOrDefault(k, 0L)) {
          problem("snapshot " + s.snapshotId() + " drops partition " + k + " from floe.offsets");
        }
      }
      if ("replace".equals(s.operation())) {
        // Floe's compaction: the files change, the records and offsets do not.
        List<String> moved = new ArrayList<>();
        for (Map.Entry<String, Long> e : offs.entrySet()) {
          long p = base.getOrDefault(e.getKey(), start.getOrDefault(e.getKey(), 0L));
          if (e.getValue() != p) moved.add(e.getKey() + " " + p + "->" + e.getValue());
        }
        if (!moved.isEmpty()) {
          problem("replace snapshot " + s.snapshotId() + " changes floe.offsets from its parent's: " + String.join(", ", moved));
        }
        if (strict) {
          long added = Long.parseLong(s.summary().getOrDefault("added-records", "0"));
          long deleted = Long.parseLong(s.summary().getOrDefault("deleted-records", "0"));
          if (added != deleted) {
            problem("replace snapshot " + s.snapshotId() + " adds " + added + " records but removes " + deleted);
          }
          Snapshot parent = s.parentId() == null ? null : md.snapshot(s.parentId());
          String pt = parent == null ? null : parent.summary().get("total-records");
          if (pt != null && !pt.equals(s.summary().get("total-records"))) {
            problem("replace snapshot " + s.snapshotId() + " has total-records " + s.summary().get("total-records") + ", its parent " + pt);
          }
        }
      } else if (strict && "append".equals(s.operation())) {
        String added = s.summary().get("added-records");
        if (added == null || Long.parseLong(added) != delta) {
          problem("append snapshot " + s.snapshotId() + " added " + added + " records but its floe.offsets advance by " + delta);
        }
      } else if (strict) {
        problem("snapshot " + s.snapshotId() + " has operation " + s.operation() + "; Floe only appends and compacts (replace)");
      }
    }
  }
}
