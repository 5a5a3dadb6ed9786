//go:build long

package e2e

// The chaos test's catalog mirror: every node mirrors the tables to one
// fake Glue (gluetest, in this process, over HTTP), which the schedule
// takes down for a while or edits by hand. After a fault ends the mirror
// must point at a newer metadata file of every table within mirrorHeal;
// at the end it must point at each table's current one.

import (
	"strings"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/sinks/glue/gluetest"
)

// mirrorHeal is how soon after a mirror fault ends every table's entry
// must have moved on: the bound for healing an infrastructure fault.
const mirrorHeal = 5 * time.Second

// addMirror configures every node started from now on to mirror to a
// fake Glue, syncing every half second.
func (f *fleet) addMirror() *gluetest.Server {
	f.t.Setenv("AWS_ACCESS_KEY_ID", "test")
	f.t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	f.t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	g := gluetest.New(f.t)
	if f.cfgExtra == nil {
		f.cfgExtra = map[string]any{}
	}
	f.cfgExtra["catalogs"] = map[string]any{"sync_interval": "500ms",
		"glue": map[string]any{"enabled": true, "region": "eu-west-1", "endpoint": g.URL, "skip_archive": true}}
	return g
}

// mirrorVersions returns the Glue entry version of each mapped topic's
// table (0: no entry yet).
func (c *chaos) mirrorVersions() map[string]int {
	out := map[string]int{}
	for _, topic := range c.f.topics {
		tb, _ := c.mirror.Table(fleetNamespace, strings.ToLower(topic))
		out[topic] = tb.Version
	}
	return out
}

// mirrorHealed waits until every table's entry moved past the versions
// seen when the fault ended, and fails the test if that took longer than
// mirrorHeal (it waits on up to a minute to say how long it took).
func (c *chaos) mirrorHealed(what string, before map[string]int) {
	f := c.f
	end := time.Now()
	err := wait.Poll(time.Minute, func() error {
		for topic, v := range c.mirrorVersions() {
			if v <= before[topic] {
				return &stillBehind{topic}
			}
		}
		return nil
	})
	took := time.Since(end)
	f.event("mirror healed after %s %.1fs after its end", what, took.Seconds())
	switch {
	case err != nil:
		f.t.Errorf("the Glue mirror never healed after %s: %v", what, err)
	case took > mirrorHeal:
		f.t.Errorf("the Glue mirror healed %.1fs after %s ended, want within %s", took.Seconds(), what, mirrorHeal)
	}
}

type stillBehind struct{ topic string }

func (e *stillBehind) Error() string { return "the Glue entry of " + e.topic + " has not moved" }

// mirrorDown takes the fake Glue down for 1-6 s (every call answers 503)
// while commits go on.
func (c *chaos) mirrorDown() {
	d := time.Duration(1000+c.rng.IntN(5000)) * time.Millisecond
	c.f.event("Glue down for %s", d)
	c.mirror.SetDown(true)
	time.Sleep(d) // the fault: the catalog down that long
	before := c.mirrorVersions()
	c.mirror.SetDown(false)
	c.f.event("Glue back")
	c.mirrorHealed("an outage", before)
}

// mirrorEdit points one table's entry at another metadata file by hand,
// as someone editing Glue would; the next sync overwrites it.
func (c *chaos) mirrorEdit() {
	topic := pick(c.rng, c.f.topics)
	name := strings.ToLower(topic)
	tb, ok := c.mirror.Table(fleetNamespace, name)
	if !ok {
		c.f.event("no Glue entry of %s yet: nothing to edit", topic)
		return
	}
	edited := tb.Parameters["previous_metadata_location"]
	if edited == "" {
		edited = "s3://someone/else/metadata/00000-hand.metadata.json"
	}
	c.f.event("hand edit of %s in Glue: metadata_location %s", topic, edited)
	c.mirror.Alter(fleetNamespace, name, map[string]string{"metadata_location": edited})
	after, _ := c.mirror.Table(fleetNamespace, name)
	before := c.mirrorVersions()
	before[topic] = after.Version
	c.mirrorHealed("a hand edit", before)
	if now, _ := c.mirror.Table(fleetNamespace, name); now.Parameters["metadata_location"] == edited {
		c.f.t.Errorf("the hand edit of %s stayed in Glue", topic)
	}
}

// verifyMirror checks, once the fleet caught up, that every table's Glue
// entry points at its current metadata file.
func (f *fleet) verifyMirror(g *gluetest.Server) {
	f.t.Helper()
	err := wait.Poll(time.Minute, func() error {
		rep, _, err := f.status()
		if err != nil {
			return err
		}
		for _, topic := range f.topics {
			tr, _ := tableReport(rep, tableOf(topic))
			tb, _ := g.Table(fleetNamespace, strings.ToLower(topic))
			if tb.Parameters["metadata_location"] != tr.MetadataLocation {
				return &stillBehind{topic}
			}
		}
		return nil
	})
	if err != nil {
		f.t.Errorf("the Glue mirror is not current at the end: %v", err)
	}
}
