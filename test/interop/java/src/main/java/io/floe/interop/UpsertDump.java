package io.floe.interop;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.ResolvingFileIO;

/**
 * Iceberg Java's view of an upsert table for interop scenario 14: reads one snapshot with {@link
 * IcebergGenerics} (whose reader applies position and equality deletes) and writes the rows as JSON
 * lines for upsert_check.py compare, which holds the model. The comparison stays in one place so
 * both readers are judged by the same code; this class only reads.
 *
 * <pre>
 *   --metadata-location URL --snapshot-id ID --out FILE
 *   --s3-endpoint URL --s3-access-key K --s3-secret-key S --s3-region R
 * </pre>
 *
 * The first line holds the snapshot id, its floe.offsets and how many delete files the scan
 * planned; each other line one row: p (partition), o (offset), key, id, k, v.
 */
public final class UpsertDump {
  private UpsertDump() {}

  public static void main(String[] args) throws Exception {
    String location = null;
    String out = null;
    long snapshotId = -1;
    Map<String, String> ioProps = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--metadata-location": location = v; break;
        case "--snapshot-id": snapshotId = Long.parseLong(v); break;
        case "--out": out = v; break;
        case "--s3-endpoint": ioProps.put("s3.endpoint", v); ioProps.put("s3.path-style-access", "true"); break;
        case "--s3-access-key": ioProps.put("s3.access-key-id", v); break;
        case "--s3-secret-key": ioProps.put("s3.secret-access-key", v); break;
        case "--s3-region": ioProps.put("client.region", v); break;
        default:
          System.err.println("upsert-dump: unknown argument " + args[i]);
          System.exit(2);
      }
    }
    if (location == null || out == null || snapshotId < 0) {
      System.err.println("upsert-dump: --metadata-location, --snapshot-id and --out are required");
      System.exit(2);
    }
    ResolvingFileIO io = new ResolvingFileIO();
    io.setConf(new Configuration());
    io.initialize(ioProps);
    Table table = new BaseTable(new StaticTableOperations(location, io), "upsert");
    Snapshot snap = table.snapshot(snapshotId);
    if (snap == null) {
      System.err.println("upsert-dump: no snapshot " + snapshotId + " in " + location);
      System.exit(1);
    }
    ObjectMapper json = new ObjectMapper();
    long rows = 0;
    try (BufferedWriter w = Files.newBufferedWriter(Paths.get(out), StandardCharsets.UTF_8)) {
      ObjectNode head = json.createObjectNode();
      head.put("snapshot_id", snapshotId);
      head.put("floe_offsets", snap.summary().get("floe.offsets"));
      head.put("delete_files", plannedDeletes(table, snapshotId));
      w.write(json.writeValueAsString(head));
      w.newLine();
      try (CloseableIterable<Record> it =
          IcebergGenerics.read(table).useSnapshot(snapshotId)
              .select("_kafka_partition", "_kafka_offset", "_kafka_key", "id", "k", "v").build()) {
        for (Record r : it) {
          ObjectNode n = json.createObjectNode();
          n.put("p", (Integer) r.getField("_kafka_partition"));
          n.put("o", (Long) r.getField("_kafka_offset"));
          ByteBuffer key = (ByteBuffer) r.getField("_kafka_key");
          n.put("key", key == null ? null : StandardCharsets.UTF_8.decode(key.duplicate()).toString());
          Object id = r.getField("id");
          if (id == null) {
            n.putNull("id");
          } else {
            n.put("id", ((Number) id).longValue());
          }
          n.put("k", (String) r.getField("k"));
          n.put("v", (String) r.getField("v"));
          w.write(json.writeValueAsString(n));
          w.newLine();
          rows++;
        }
      }
    }
    io.close();
    System.out.println("iceberg-java: read " + rows + " rows of snapshot " + snapshotId);
  }

  /** The distinct delete files the scan of the snapshot planned (and so applies). */
  private static int plannedDeletes(Table table, long snapshotId) throws Exception {
    Set<String> paths = new HashSet<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshotId).planFiles()) {
      for (FileScanTask t : tasks) {
        for (DeleteFile d : t.deletes()) {
          paths.add(d.location());
        }
      }
    }
    return paths.size();
  }
}
