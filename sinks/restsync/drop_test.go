package restsync

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/floe-io/floe/sinks/sink"
)

// TestDrop: a table turned [delta] leaves the external catalog (dropped
// without purge, which the fake checks); a second drop is a no-op; an entry
// of that name pointing at another table's metadata is left alone.
func TestDrop(t *testing.T) {
	fake := &fakeREST{t: t, overwrite: true, ns: map[string]bool{}, tables: map[string]string{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	m0 := writeMetadata(t, t.TempDir(), "00000")
	s := New(Config{Name: "polaris", URI: srv.URL, Warehouse: "wh", ClientID: "floe", ClientSecret: "s3cret"}, nil)
	ctx := context.Background()
	st := sink.SyncTable{Key: "shop\x1forders", Ident: []string{"shop", "orders"}, MetadataLocation: m0}
	if err := s.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Drop(ctx, st); err != nil {
			t.Fatal(err)
		}
		if got := fake.location("shop/orders"); got != "" {
			t.Fatalf("still registered at %s; calls %v", got, fake.callList())
		}
	}
	other := writeMetadata(t, t.TempDir(), "00000")
	if err := s.Sync(ctx, sink.SyncTable{Key: st.Key, Ident: st.Ident, MetadataLocation: other}); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(ctx, st); err != nil {
		t.Fatal(err)
	}
	if got := fake.location("shop/orders"); got != other {
		t.Fatalf("another table's entry was dropped (now %q)", got)
	}
}
