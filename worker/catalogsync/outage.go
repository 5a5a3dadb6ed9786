package catalogsync

import (
	"sync"
	"time"
)

// probeEvery is how often the one probing loop of a catalog that is down
// tries again, whatever its backoff has grown to.
const probeEvery = time.Second

// outages tracks, per catalog, a failure that every table's loop backs off
// from. Backing off per table keeps a thousand tables from hammering a
// catalog that is down, but alone it would leave each table waiting out its
// own grown backoff (up to 30 s) after the catalog is back. So one loop per
// catalog, the probe, retries every probeEvery; the first success of any
// loop ends the outage and wakes every loop waiting it out, so a catalog
// that returns is mirrored again within about a second of its return.
type outages struct {
	mu sync.Mutex
	by map[string]*outage // catalog name
}

type outage struct {
	probe  string        // the table key whose loop probes; "" until one fails again
	healed chan struct{} // closed at the first success
}

// failed notes a failed sync of table key to catalog: it returns whether
// that loop probes and the channel closed when the catalog answers again.
func (o *outages) failed(catalog, key string) (probe bool, healed <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[string]*outage{}
	}
	out := o.by[catalog]
	if out == nil {
		out = &outage{healed: make(chan struct{})}
		o.by[catalog] = out
	}
	if out.probe == "" {
		out.probe = key
	}
	return out.probe == key, out.healed
}

// succeeded ends catalog's outage, if any, waking the loops waiting it out.
func (o *outages) succeeded(catalog string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if out := o.by[catalog]; out != nil {
		close(out.healed)
		delete(o.by, catalog)
	}
}

// left notes that table key's loop for catalog ended (the role moved): if
// it was the probe, the next loop that fails takes over.
func (o *outages) left(catalog, key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if out := o.by[catalog]; out != nil && out.probe == key {
		out.probe = ""
	}
}
