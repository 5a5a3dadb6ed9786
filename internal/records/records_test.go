package records

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestShapeWireFormat pins the JSON of a Shape, which is replicated in
// fsm.RequestSchema: the keys are the ones the release before the tags
// wrote (Go field names), and decoding gives the value back.
func TestShapeWireFormat(t *testing.T) {
	sh := &Shape{Kind: Struct, SchemaID: 3, CommittedSchemaID: 2, Fields: []*Field{
		{Name: "amount", Committed: true, Shape: &Shape{Kind: Decimal, Precision: 38, Scale: 10}},
		{Name: "tags", Shape: &Shape{Kind: Map, Key: &Shape{Kind: String}, Elem: &Shape{Kind: Fixed, Size: 16}}},
	}}
	const want = `{"Kind":5,"Fields":[` +
		`{"Name":"amount","Shape":{"Kind":11,"Fields":null,"Elem":null,"Key":null,"Precision":38,"Scale":10,"Size":0,"SchemaID":0,"CommittedSchemaID":0},"Committed":true},` +
		`{"Name":"tags","Shape":{"Kind":17,"Fields":null,` +
		`"Elem":{"Kind":10,"Fields":null,"Elem":null,"Key":null,"Precision":0,"Scale":0,"Size":16,"SchemaID":0,"CommittedSchemaID":0},` +
		`"Key":{"Kind":4,"Fields":null,"Elem":null,"Key":null,"Precision":0,"Scale":0,"Size":0,"SchemaID":0,"CommittedSchemaID":0},` +
		`"Precision":0,"Scale":0,"Size":0,"SchemaID":0,"CommittedSchemaID":0},"Committed":false}],` +
		`"Elem":null,"Key":null,"Precision":0,"Scale":0,"Size":0,"SchemaID":3,"CommittedSchemaID":2}`
	got, err := json.Marshal(sh)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("shape encoding changed:\n got %s\nwant %s", got, want)
	}
	back := new(Shape)
	if err := json.Unmarshal([]byte(want), back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != want {
		t.Fatalf("decoded shape re-encodes as %s", again)
	}
}

// TestShapeFieldsTagged: every field of the replicated Shape has an explicit
// JSON key, so that a Go rename cannot change the format.
func TestShapeFieldsTagged(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Shape](), reflect.TypeFor[Field]()} {
		for i := range typ.NumField() {
			if f := typ.Field(i); f.Tag.Get("json") == "" {
				t.Errorf("%s.%s has no JSON key: add a tag", typ, f.Name)
			}
		}
	}
}
