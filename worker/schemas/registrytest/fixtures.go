package registrytest

// Schemas that exercise every type Floe maps, shared by the tests of
// schemas, cmd/floe and the benchmarks.

// AvroAllTypes has every Avro type and logical type, a recursive field
// and a non-nullable union.
const AvroAllTypes = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"b","type":"boolean"},
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"s","type":"string"},
 {"name":"by","type":"bytes"},
 {"name":"opt","type":["null","string"],"default":null},
 {"name":"u","type":["null","long","string"]},
 {"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"arr","type":{"type":"array","items":"long"}},
 {"name":"m","type":{"type":"map","values":"string"}},
 {"name":"item","type":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"}]}},
 {"name":"fx","type":{"type":"fixed","name":"F4","size":4}},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"decf","type":{"type":"fixed","name":"D8","size":8,"logicalType":"decimal","precision":18,"scale":4}},
 {"name":"id","type":{"type":"string","logicalType":"uuid"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"tmil","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tmic","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"tsms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsus","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"ltms","type":{"type":"long","logicalType":"local-timestamp-millis"}},
 {"name":"ltus","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"next","type":["null","Order"],"default":null}
]}`

// ProtoAllTypes has every Protobuf scalar, enum, map, repeated, oneof,
// nested and recursive messages and the well-known types; shop.Order is
// message index 0, shop.Other index 1.
const ProtoAllTypes = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";

message Order {
  bool b = 1;
  int32 i = 2;
  int64 l = 3;
  uint32 u32 = 4;
  uint64 u64 = 5;
  sint32 si = 6;
  float f = 7;
  double d = 8;
  string s = 9;
  bytes by = 10;
  optional string opt = 11;
  Color color = 12;
  repeated int64 arr = 13;
  map<string, int32> m = 14;
  Item item = 15;
  repeated Item items = 16;
  google.protobuf.Timestamp ts = 17;
  google.protobuf.Duration dur = 18;
  google.protobuf.Int64Value wl = 19;
  google.protobuf.StringValue ws = 20;
  google.protobuf.Struct attrs = 21;
  oneof choice {
    string name = 22;
    int64 number = 23;
  }
  Order next = 24;
  enum Color { RED = 0; GREEN = 1; }
  message Item { string sku = 1; }
}
message Other { string x = 1; }
`

// JSONAllTypes has every JSON Schema type, format, union and a recursive
// $ref.
const JSONAllTypes = `{
 "$schema": "http://json-schema.org/draft-07/schema#",
 "title": "Order", "type": "object",
 "properties": {
  "b": {"type": "boolean"},
  "n": {"type": "integer"},
  "x": {"type": "number"},
  "s": {"type": "string"},
  "opt": {"type": ["null", "string"]},
  "alt": {"oneOf": [{"type": "null"}, {"type": "integer"}, {"type": "string"}]},
  "e": {"enum": ["RED", "GREEN"]},
  "arr": {"type": "array", "items": {"type": "integer"}},
  "m": {"type": "object", "additionalProperties": {"type": "string"}},
  "item": {"$ref": "#/definitions/Item"},
  "day": {"type": "string", "format": "date"},
  "at": {"type": "string", "format": "date-time"},
  "tm": {"type": "string", "format": "time"},
  "id": {"type": "string", "format": "uuid"},
  "bin": {"type": "string", "contentEncoding": "base64"},
  "next": {"$ref": "#"}
 },
 "definitions": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}}}
}`
