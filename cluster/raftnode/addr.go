package raftnode

import (
	"fmt"
	"net"
)

// advertisable turns a listen address into one peers can dial. A listener
// bound to all interfaces ("0.0.0.0:7420", ":7420") is advertised at this
// host's first non-loopback IPv4 address, which on ECS with awsvpc
// networking is the task's own address, so the same configuration serves
// every task.
func advertisable(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return addr, nil
	}
	ip, err := hostIP()
	if err != nil {
		return "", fmt.Errorf("choosing an address to advertise for %s: %w", addr, err)
	}
	return net.JoinHostPort(ip, port), nil
}

func hostIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		// Link-local addresses (169.254.x.x: the ECS task metadata
		// interface on awsvpc) are not reachable from other tasks.
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() && ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("no non-loopback IPv4 address; set the advertise address")
}
