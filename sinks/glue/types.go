package glue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/aws/aws-sdk-go-v2/aws"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// glueType renders an Iceberg type as the Hive type string Glue stores,
// with the mapping Iceberg Java's GlueCatalog uses, so that Athena reads
// the same columns whichever writer registered the table.
func glueType(t iceberg.Type) string {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return "boolean"
	case iceberg.Int32Type:
		return "int"
	case iceberg.Int64Type:
		return "bigint"
	case iceberg.Float32Type:
		return "float"
	case iceberg.Float64Type:
		return "double"
	case iceberg.DateType:
		return "date"
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return "timestamp"
	case iceberg.StringType, iceberg.UUIDType, iceberg.TimeType:
		return "string"
	case iceberg.BinaryType, iceberg.FixedType:
		return "binary"
	case iceberg.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision(), t.Scale())
	case *iceberg.StructType:
		parts := make([]string, 0, len(t.FieldList))
		for _, f := range t.FieldList {
			parts = append(parts, f.Name+":"+glueType(f.Type))
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case *iceberg.ListType:
		return "array<" + glueType(t.Element) + ">"
	case *iceberg.MapType:
		return "map<" + glueType(t.KeyType) + "," + glueType(t.ValueType) + ">"
	}
	// Types without a Hive equivalent (nanosecond timestamps, variant,
	// geometry) are listed as strings; readers take the real type from
	// the Iceberg metadata anyway.
	return "string"
}

// columns mirrors a schema's top-level fields, with the parameters Iceberg
// Java sets so that its readers can match columns to field ids.
func columns(sc *iceberg.Schema) []gluetypes.Column {
	out := make([]gluetypes.Column, 0, len(sc.Fields()))
	for _, f := range sc.Fields() {
		c := gluetypes.Column{
			Name: aws.String(f.Name),
			Type: aws.String(glueType(f.Type)),
			Parameters: map[string]string{
				"iceberg.field.id":       strconv.Itoa(f.ID),
				"iceberg.field.optional": strconv.FormatBool(!f.Required),
				"iceberg.field.current":  "true",
			},
		}
		if f.Doc != "" {
			c.Comment = aws.String(f.Doc)
		}
		out = append(out, c)
	}
	return out
}
