package schemas

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/floe-io/floe/internal/records"
)

// Decoder decodes registry-framed keys and values. It implements
// ingest.SchemaDecoder. Safe for concurrent use.
type Decoder struct {
	reg *Registry

	mu       sync.Mutex
	compiled map[int]*compiled
}

// NewDecoder returns a decoder reading schemas from reg.
func NewDecoder(reg *Registry) *Decoder {
	return &Decoder{reg: reg, compiled: map[int]*compiled{}}
}

// compiled is one schema ready to decode.
type compiled struct {
	id    int
	typ   string // TypeAvro, TypeProtobuf, TypeJSON
	err   error  // the schema cannot be used (unsupported): every record naming it is bad
	avro  *avroNode
	proto protoreflect.FileDescriptor
	json  *jsonType
	shape *records.Shape // avro and json

	pmu    sync.Mutex
	pshape map[string]protoShapeEntry // Protobuf: per message, by full name
}

type protoShapeEntry struct {
	md    protoreflect.MessageDescriptor
	shape *records.Shape
	plan  *pmsg
}

// hardLimits bound every schema whatever its tables allow: no table may
// set looser limits, so a schema past them can never be followed, and its
// values are never decoded (each table checks its own, tighter, limits).
var hardLimits = records.Limits{MaxDepth: records.MaxNestingDepthCap, MaxColumns: records.MaxColumnsCap}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{records.ErrBadRecord}, args...)...)
}

// formatType is the schema type a table format expects ("" for latest:
// whatever the subject holds).
func formatType(format string) string {
	switch format {
	case "avro":
		return TypeAvro
	case "protobuf":
		return TypeProtobuf
	case "json_schema":
		return TypeJSON
	}
	return ""
}

// Value implements ingest.SchemaDecoder.
func (d *Decoder) Value(ctx context.Context, format, subject string, data []byte) (records.Decoded, error) {
	if format == "latest" {
		s, err := d.reg.Latest(ctx, subject)
		if errors.Is(err, ErrNotFound) {
			return records.Decoded{}, bad("subject %s has no schema in the registry", subject)
		}
		if err != nil {
			return records.Decoded{}, err
		}
		c, err := d.compile(ctx, s.ID)
		if err != nil {
			return records.Decoded{}, err
		}
		return d.decode(c, nil, data, false)
	}
	id, body, err := header(data)
	if err != nil {
		return records.Decoded{}, bad("%v", err)
	}
	c, err := d.compile(ctx, id)
	if err != nil {
		return records.Decoded{}, err
	}
	if want := formatType(format); want != "" && c.typ != want {
		return records.Decoded{}, bad("schema id %d is %s, the table's format is %s", id, c.typ, format)
	}
	return d.decode(c, nil, body, true)
}

// Key implements ingest.SchemaDecoder.
func (d *Decoder) Key(ctx context.Context, data []byte) (records.Decoded, bool, error) {
	if len(data) < 5 || data[0] != magic {
		return records.Decoded{}, false, nil // most keys: plain bytes, no error to build
	}
	id, body, err := header(data)
	if err != nil {
		return records.Decoded{}, false, nil
	}
	c, err := d.compile(ctx, id)
	if err != nil {
		if errors.Is(err, records.ErrBadRecord) {
			return records.Decoded{}, false, nil // not a registry key after all
		}
		return records.Decoded{}, false, err
	}
	dec, err := d.decode(c, nil, body, true)
	if err != nil {
		return records.Decoded{}, false, nil
	}
	return dec, true, nil
}

func (d *Decoder) decode(c *compiled, _ []int, body []byte, framed bool) (records.Decoded, error) {
	if c.err != nil {
		return records.Decoded{}, bad("schema id %d: %v", c.id, c.err)
	}
	out := records.Decoded{SchemaID: c.id}
	switch c.typ {
	case TypeAvro:
		r := avroReader{b: body}
		v, err := r.decode(c.avro)
		if err != nil {
			return out, bad("Avro payload of schema %d: %v", c.id, err)
		}
		if r.pos != len(body) {
			return out, bad("Avro payload of schema %d: %d bytes left after the value", c.id, len(body)-r.pos)
		}
		out.Value, out.Shape = v.(map[string]any), c.shape
	case TypeProtobuf:
		indexes := []int{0}
		if framed {
			var err error
			if indexes, body, err = messageIndexes(body); err != nil {
				return out, bad("%v", err)
			}
		}
		e, err := c.protoEntry(indexes)
		if err != nil {
			return out, bad("schema %d: %v", c.id, err)
		}
		v, err := decodeProto(e.plan, body)
		if err != nil {
			return out, bad("schema %d: %v", c.id, err)
		}
		out.Value, out.Shape = v, e.shape
	case TypeJSON:
		v, err := decodeJSONSchema(c.json, body)
		if err != nil {
			return out, bad("JSON of schema %d: %v", c.id, err)
		}
		out.Value, out.Shape = v, c.json.shape
	default:
		return out, bad("schema id %d has type %s", c.id, c.typ)
	}
	return out, nil
}

func (c *compiled) protoEntry(indexes []int) (protoShapeEntry, error) {
	md, err := protoMessage(c.proto, indexes)
	if err != nil {
		return protoShapeEntry{}, err
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if e, ok := c.pshape[string(md.FullName())]; ok {
		return e, nil
	}
	shape := protoShape(md)
	if err := hardLimits.Check(shape, 0, ""); err != nil {
		return protoShapeEntry{}, err
	}
	e := protoShapeEntry{md: md, shape: shape, plan: planProto(md, shape)}
	c.pshape[string(md.FullName())] = e
	return e, nil
}

// compile returns the compiled schema of an id, fetching it (and its
// references) on first use. A schema the registry does not know is a bad
// record; a registry that cannot be asked is a transient error.
func (d *Decoder) compile(ctx context.Context, id int) (*compiled, error) {
	d.mu.Lock()
	c, ok := d.compiled[id]
	d.mu.Unlock()
	if ok {
		return c, nil
	}
	s, err := d.reg.ByID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, bad("unknown schema id %d (the registry does not have it)", id)
	}
	if err != nil {
		return nil, err
	}
	refs, err := d.references(ctx, s.References, map[string]bool{})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, bad("schema id %d: a reference is missing from the registry: %v", id, err)
		}
		return nil, err
	}
	c = &compiled{id: id, typ: s.SchemaType(), pshape: map[string]protoShapeEntry{}}
	switch c.typ {
	case TypeAvro:
		cache := &avro.SchemaCache{}
		for _, r := range refs {
			if _, err := avro.ParseWithCache(r.text, "", cache); err != nil {
				c.err = fmt.Errorf("reference %s: %w", r.name, err)
			}
		}
		if c.err == nil {
			c.avro, c.shape, c.err = compileAvro(s.Text, cache)
		}
	case TypeProtobuf:
		imports := map[string]string{}
		for _, r := range refs {
			imports[r.name] = r.text
		}
		c.proto, c.err = compileProto(ctx, s.Text, imports)
	case TypeJSON:
		parsed := map[string]*jnode{}
		for _, r := range refs {
			n, err := parseOrdered([]byte(r.text))
			if err != nil {
				c.err = fmt.Errorf("reference %s: %w", r.name, err)
				break
			}
			parsed[r.name] = n
		}
		if c.err == nil {
			c.json, c.err = compileJSONSchema(s.Text, parsed)
		}
	default:
		c.err = fmt.Errorf("%w: schema type %s", ErrUnsupported, c.typ)
	}
	if c.err == nil && c.shape == nil && c.json != nil {
		c.shape = c.json.shape
	}
	if c.err == nil {
		c.err = checkNames(c.shape)
	}
	if c.err == nil {
		c.err = hardLimits.Check(c.shape, 0, "")
	}
	d.mu.Lock()
	d.compiled[id] = c
	d.mu.Unlock()
	return c, nil
}

// checkNames refuses top-level fields that would collide with Floe's
// metadata columns.
func checkNames(s *records.Shape) error {
	if s == nil {
		return nil
	}
	for _, f := range s.Fields {
		if strings.HasPrefix(f.Name, records.MetadataPrefix) {
			return fmt.Errorf("field %s collides with Floe's metadata columns (%s*)", f.Name, records.MetadataPrefix)
		}
	}
	return nil
}

type ref struct{ name, text string }

// references fetches a schema's references, depth first, so that every
// named type or import is known before the schema that uses it.
func (d *Decoder) references(ctx context.Context, rs []Reference, seen map[string]bool) ([]ref, error) {
	var out []ref
	for _, r := range rs {
		key := r.Subject + "@" + fmt.Sprint(r.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		s, err := d.reg.Version(ctx, r.Subject, r.Version)
		if err != nil {
			return nil, err
		}
		sub, err := d.references(ctx, s.References, seen)
		if err != nil {
			return nil, err
		}
		out = append(append(out, sub...), ref{name: r.Name, text: s.Text})
	}
	return out, nil
}
