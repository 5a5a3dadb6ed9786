package assignment

// zoneIndex counts placements per zone so ties can favour the zone that
// holds the least: losing a zone then stops a smaller share of each topic
// and of the commits. A nil index (zones not in use) counts nothing, so
// callers need no special case.
type zoneIndex struct {
	of    map[string]string         // node -> zone
	topic map[string]map[string]int // topic -> zone -> partitions
}

// newZoneIndex returns an index when at least two distinct non-empty zones
// are among nodes, nil otherwise: with one zone every tie-break would be
// equal anyway. Nodes without a zone share the zone "", since nothing says
// they are apart.
func newZoneIndex(nodes []string, zones map[string]string) *zoneIndex {
	distinct := map[string]bool{}
	for _, n := range nodes {
		if z := zones[n]; z != "" {
			distinct[z] = true
		}
	}
	if len(distinct) < 2 {
		return nil
	}
	z := &zoneIndex{of: map[string]string{}, topic: map[string]map[string]int{}}
	for _, n := range nodes {
		z.of[n] = zones[n]
	}
	return z
}

// add counts delta partitions of topic on node's zone.
func (z *zoneIndex) add(topic, node string, delta int) {
	if z == nil {
		return
	}
	if z.topic[topic] == nil {
		z.topic[topic] = map[string]int{}
	}
	z.topic[topic][z.of[node]] += delta
}

// topicCount returns how many partitions of topic node's zone holds.
func (z *zoneIndex) topicCount(topic, node string) int {
	if z == nil {
		return 0
	}
	return z.topic[topic][z.of[node]]
}

// zoneOf returns node's zone, "" when zones are not in use.
func (z *zoneIndex) zoneOf(node string) string {
	if z == nil {
		return ""
	}
	return z.of[node]
}
