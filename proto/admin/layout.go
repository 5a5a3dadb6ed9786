package admin

import (
	"time"

	"github.com/floe-io/floe/internal/config"
)

// TableLayout is what the console's table page shows of a table's shape:
// its current schema with when each field appeared, its partition spec,
// the mapping that routes into it and where engines find it.
type TableLayout struct {
	FormatVersion    int         `json:"format_version"`
	SchemaID         int         `json:"schema_id"`
	Fields           []FieldInfo `json:"fields"`
	Spec             []SpecField `json:"partition_spec"`
	Location         string      `json:"location"`
	MetadataLocation string      `json:"metadata_location"`
	CurrentSnapshot  int64       `json:"current_snapshot_id"`
	// Mapping routes into the table now (nil: none does).
	Mapping *config.Table `json:"mapping,omitempty"`
	// CatalogURL is this node's Iceberg REST catalog ("" when it serves
	// none); Namespace and Name the table's identifier in it.
	CatalogURL string `json:"catalog_url,omitempty"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// FieldInfo is one field of the current schema (nested fields by their
// dotted path). SinceSchema is the first schema that had it and Since the
// time of the oldest retained snapshot written with a schema that has it
// (zero when no retained snapshot does).
type FieldInfo struct {
	ID          int       `json:"id"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Required    bool      `json:"required"`
	SinceSchema int       `json:"since_schema_id"`
	Since       time.Time `json:"since,omitzero"`
}

// SpecField is one field of the current partition spec.
type SpecField struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Transform string `json:"transform"`
}

// DeadLetter is one of a table's newest dead letters as the console's
// admins see it: where the record was, why it was refused and the start
// of its value (which may hold data a read token must not see).
type DeadLetter struct {
	Topic      string    `json:"topic"`
	Partition  int32     `json:"partition"`
	Offset     int64     `json:"offset"`
	Timestamp  time.Time `json:"timestamp,omitzero"`
	Error      string    `json:"error"`
	Value      string    `json:"value"` // cut to a few hundred bytes
	ValueBytes int       `json:"value_bytes"`
}
