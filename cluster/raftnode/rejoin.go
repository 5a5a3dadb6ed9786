package raftnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
)

// rejoinGrace is how long a node that believes it is a member waits for a
// leader before it asks a peer to add it again. A group electing after a
// restart finds its leader well within it; a node whose removal it never
// received (the leader stops replicating to a server as soon as it appends
// the configuration without it) would otherwise wait forever.
const rejoinGrace = 3 * time.Second

// errNoLeaderAmongPeers: no peer reached belongs to a group with a leader.
var errNoLeaderAmongPeers = errors.New("no peer with a leader")

// rejoiner runs on every node once it has Raft state (a fresh node after it
// joined). Such a node never bootstraps, but the group may have removed it: it drained and left on
// SIGTERM, or the autopilot removed it as dead. Restarted on its old data
// directory, it is then outside the leader's configuration and nobody
// contacts it. So while this process has not asked to drain, whenever the
// node is not in its own latest configuration (and this process has not
// left), or believes it is but has
// seen no leader for rejoinGrace, it asks its peers (the join list and the
// members its state knows) to add it, exactly as a fresh node joins: a
// peer of a group with a leader passes the Join to the leader, which adds
// it as a non-voter (a no-op if it is already there) and the autopilot
// promotes it.
type rejoiner struct{ n *Node }

func (j rejoiner) loop() {
	n := j.n
	log := n.log.With("component", "join")
	var since time.Time // first round outside a group with a leader
	for round := 0; ; round++ {
		select {
		case <-n.stop:
			return
		case <-time.After(time.Second):
		}
		_, leader := n.raft.LeaderWithID()
		member := n.IsMember()
		if n.draining.Load() || n.left.Load() || (member && leader != "") {
			since = time.Time{}
			continue
		}
		if since.IsZero() {
			since = time.Now()
		}
		if member && time.Since(since) < rejoinGrace {
			continue
		}
		via, err := j.ask()
		if err != nil {
			if round%10 == 0 {
				msg := "not in the raft group's configuration: asking peers to add this node again"
				if member {
					msg = "no leader seen: asking peers to add this node again, in case the group removed it"
				}
				log.Info(msg, "reason", err.Error())
			}
			continue
		}
		log.Info("asked to rejoin the raft group", "via", via, "was_member", member)
		since = time.Time{}
	}
}

// ask asks every peer it can reach until one of a group with a leader
// passes the Join on; it returns that peer's id.
func (j rejoiner) ask() (string, error) {
	n := j.n
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	self := n.rpcInfoSelf()
	for _, addr := range j.peers(ctx) {
		var info InfoResponse
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		err := n.clients.call(cctx, addr, "Info", &InfoRequest{}, &info)
		ccancel()
		if err != nil || info.ID == n.cfg.ID || !info.HasState || info.LeaderID == "" || info.LeaderID == n.cfg.ID {
			continue
		}
		if err := n.askJoin(ctx, addr, info.ID, self.RaftAddr); err != nil {
			return "", err
		}
		return info.ID, nil
	}
	return "", errNoLeaderAmongPeers
}

// peers is the join list resolved plus the RPC address of every other
// member this node's state knows: a node started without a join list (its
// peers were given once, or it was a bootstrap member) still finds them.
func (j rejoiner) peers(ctx context.Context) []string {
	n := j.n
	out := resolvePeers(ctx, n.cfg.Join)
	n.fsm.Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if id != n.cfg.ID && m.RPC != "" {
				out = append(out, m.RPC)
			}
		}
	})
	out = slices.DeleteFunc(out, func(a string) bool { return a == n.cfg.RPCAdvertise || a == n.cfg.RPCAddr })
	slices.Sort(out)
	return slices.Compact(out)
}

// askJoin asks the peer at addr (id) to add this node, at raftAddr, to its
// group; a follower passes the request to its leader.
func (n *Node) askJoin(ctx context.Context, addr, id, raftAddr string) error {
	var out Empty
	jctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := n.clients.call(jctx, addr, "Join", &JoinRequest{ID: n.cfg.ID, RaftAddr: raftAddr}, &out); err != nil {
		return fmt.Errorf("asking %s to add this node: %w", id, err)
	}
	return nil
}
