package assignment

import (
	"math"

	"github.com/floe-io/floe/internal/ledger"
)

const (
	// loadImbalanceRatio and minLoadImbalance are the hysteresis of the
	// rebalance: the gap between the most and the least loaded node must
	// pass both a fraction of the mean node load and an absolute floor
	// (bytes per second) before anything moves. Throughput is measured,
	// hence noisy, and every move restarts a fetcher and bumps an epoch;
	// on a nearly idle cluster a large ratio is still only noise.
	loadImbalanceRatio = 0.25
	minLoadImbalance   = 64 << 10
	// maxSwapsPerPlan bounds the churn one decision can cause, so a wrong
	// measurement cannot reshuffle the whole cluster at once; the next
	// plans continue if the imbalance persists.
	maxSwapsPerPlan = 4
)

// partitionLoads returns the load of every partition in parts. A partition
// without a usable measurement (missing, negative, NaN or infinite) counts
// as the mean of the measured ones: a new or silent partition is assumed
// ordinary rather than free. The sum runs in the sorted order of parts
// because float addition is not associative and Plan must be deterministic.
func partitionLoads(parts []ledger.TopicPartition, load map[ledger.TopicPartition]float64) map[ledger.TopicPartition]float64 {
	out := make(map[ledger.TopicPartition]float64, len(parts))
	sum, measured := 0.0, 0
	for _, tp := range parts {
		if l, ok := load[tp]; ok && usable(l) {
			out[tp] = l
			sum += l
			measured++
		}
	}
	mean := 0.0
	if measured > 0 {
		mean = sum / float64(measured)
	}
	for _, tp := range parts {
		if _, ok := out[tp]; !ok {
			out[tp] = mean
		}
	}
	return out
}

func usable(l float64) bool { return l >= 0 && !math.IsInf(l, 1) }

// rebalance swaps one partition of the most loaded node with one of the
// least loaded node, at most limit times, while their gap passes the
// hysteresis. A swap keeps both counts, so the count rule still holds. Each
// swap must strictly lower the larger of the two loads; since the pair's sum
// is unchanged, it also raises the smaller, so the sum of squared node loads
// strictly falls and repeated plans cannot cycle.
func (p *placement) rebalance(limit int) {
	if len(p.nodes) < 2 {
		return
	}
	total := 0.0
	for _, n := range p.nodes {
		total += p.nodeLoad[n]
	}
	mean := total / float64(len(p.nodes))
	for range limit {
		hi, lo := p.nodes[0], p.nodes[0]
		for _, n := range p.nodes[1:] {
			if p.nodeLoad[n] > p.nodeLoad[hi] {
				hi = n
			}
			if p.nodeLoad[n] < p.nodeLoad[lo] {
				lo = n
			}
		}
		gap := p.nodeLoad[hi] - p.nodeLoad[lo]
		if hi == lo || gap <= loadImbalanceRatio*mean || gap <= minLoadImbalance {
			return
		}
		a, b, ok := p.bestSwap(hi, lo)
		if !ok {
			return
		}
		p.release(a)
		p.release(b)
		p.assign(a, lo)
		p.assign(b, hi)
	}
}

// bestSwap finds the pair (a on hi, b on lo) that most lowers the larger of
// the two node loads after the swap, if any strictly lowers it. Among equal
// pairs it prefers the one that moves fewer partitions away from their
// current holder (a partition placed by this plan moves anyway, and one
// may even go back), then the first in partition order.
func (p *placement) bestSwap(hi, lo string) (a, b ledger.TopicPartition, ok bool) {
	var onHi, onLo []ledger.TopicPartition
	for _, tp := range p.parts {
		switch p.owner[tp] {
		case hi:
			onHi = append(onHi, tp)
		case lo:
			onLo = append(onLo, tp)
		}
	}
	bestPeak, bestMoves := p.nodeLoad[hi], 0
	for _, x := range onHi {
		for _, y := range onLo {
			d := p.loads[x] - p.loads[y]
			peak := max(p.nodeLoad[hi]-d, p.nodeLoad[lo]+d)
			moves := p.moved(x, lo) + p.moved(y, hi) - p.moved(x, hi) - p.moved(y, lo)
			if peak < bestPeak || (ok && peak == bestPeak && moves < bestMoves) {
				a, b, ok, bestPeak, bestMoves = x, y, true, peak, moves
			}
		}
	}
	return a, b, ok
}

// moved is 1 when tp on n is not where it is now.
func (p *placement) moved(tp ledger.TopicPartition, n string) int {
	if cur, ok := p.current[tp]; ok && cur.Node == n {
		return 0
	}
	return 1
}
