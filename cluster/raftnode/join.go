package raftnode

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// joiner runs on a node that started without Raft state until it is part
// of a configuration. Each round it resolves the join list and asks every
// peer about itself:
//
//   - if any peer belongs to a group with a leader, it asks to be added
//     (as a non-voter; the autopilot promotes voters);
//   - if no peer has Raft state and at least BootstrapExpect fresh nodes
//     (itself included) answer, and it is among the BootstrapExpect lowest
//     ids, it bootstraps a configuration of exactly those nodes. Every node
//     of the set computes the same set from the same answers, so they all
//     bootstrap one identical configuration: Raft treats that as one
//     bootstrap. Nodes outside the set wait and join the formed group.
//
// A peer that has Raft state but no leader yet (a group restarting) makes
// the node wait: bootstrapping then would create a second group.
type joiner struct{ n *Node }

// loop tries a round every half second until the node is a member or
// closes.
func (j joiner) loop() {
	n := j.n
	log := n.log.With("component", "join")
	wait := 500 * time.Millisecond
	for round := 0; ; round++ {
		if n.IsMember() {
			return
		}
		done, err := j.round()
		if done {
			return
		}
		if err != nil && round%10 == 0 {
			log.Info("waiting to join", "reason", err.Error(), "expect", n.cfg.BootstrapExpect, "join", strings.Join(n.cfg.Join, ","))
		}
		select {
		case <-n.stop:
			return
		case <-time.After(wait):
		}
	}
}

func (j joiner) round() (bool, error) {
	n := j.n
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	addrs := resolvePeers(ctx, n.cfg.Join)
	self := n.rpcInfoSelf()
	fresh := []InfoResponse{self}
	var reached int
	for _, addr := range addrs {
		if addr == n.cfg.RPCAdvertise || addr == n.cfg.RPCAddr {
			continue
		}
		var info InfoResponse
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		err := n.clients.call(cctx, addr, "Info", &InfoRequest{}, &info)
		ccancel()
		if err != nil || info.ID == n.cfg.ID {
			continue
		}
		reached++
		if info.HasState && info.LeaderID != "" {
			if err := n.askJoin(ctx, addr, info.ID, self.RaftAddr); err != nil { // rejoin.go
				return false, err
			}
			n.log.Info("joined raft group", "via", info.ID, "leader", info.LeaderID)
			return true, nil
		}
		if info.HasState {
			return false, fmt.Errorf("peer %s has raft state but no leader yet", info.ID)
		}
		fresh = append(fresh, info)
	}
	expect := n.cfg.BootstrapExpect
	if expect <= 1 {
		return false, fmt.Errorf("no peer with a leader among %d reached (of %d addresses)", reached, len(addrs))
	}
	slices.SortFunc(fresh, func(a, b InfoResponse) int { return strings.Compare(a.ID, b.ID) })
	fresh = slices.CompactFunc(fresh, func(a, b InfoResponse) bool { return a.ID == b.ID })
	if len(fresh) < expect {
		return false, fmt.Errorf("%d of %d expected nodes seen", len(fresh), expect)
	}
	set := fresh[:expect]
	if !slices.ContainsFunc(set, func(i InfoResponse) bool { return i.ID == n.cfg.ID }) {
		return false, fmt.Errorf("not among the %d bootstrapping nodes; waiting to join", expect)
	}
	conf := raft.Configuration{}
	for _, i := range set {
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(i.ID), Address: raft.ServerAddress(i.RaftAddr)})
	}
	if err := n.raft.BootstrapCluster(conf).Error(); err != nil && err != raft.ErrCantBootstrap {
		return false, fmt.Errorf("bootstrapping: %w", err)
	}
	n.log.Info("bootstrapped raft group", "voters", len(conf.Servers))
	return true, nil
}

func (n *Node) rpcInfoSelf() InfoResponse {
	info, _ := internalService{n}.rpcInfo(context.Background(), &InfoRequest{})
	return *info
}

// resolvePeers turns the join list into RPC addresses: each host:port whose
// host resolves to several addresses (a DNS name of a service) yields one
// address per A record.
func resolvePeers(ctx context.Context, join []string) []string {
	var out []string
	for _, j := range join {
		host, port, err := net.SplitHostPort(j)
		if err != nil {
			continue
		}
		if net.ParseIP(host) != nil {
			out = append(out, j)
			continue
		}
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			continue
		}
		for _, ip := range ips {
			out = append(out, net.JoinHostPort(ip, port))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
