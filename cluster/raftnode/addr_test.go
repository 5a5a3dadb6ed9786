package raftnode

import (
	"net"
	"testing"
)

func TestAdvertisable(t *testing.T) {
	for _, tc := range []struct {
		in        string
		same      bool
		expectErr bool
	}{
		{"127.0.0.1:7420", true, false},
		{"10.0.1.17:7420", true, false},
		{"floe-1.local:7420", true, false},
		{"0.0.0.0:7420", false, false},
		{":7420", false, false},
		{"nonsense", false, true},
	} {
		got, err := advertisable(tc.in)
		if (err != nil) != tc.expectErr {
			if tc.in == "0.0.0.0:7420" || tc.in == ":7420" {
				if _, herr := hostIP(); herr != nil {
					continue // a machine without a non-loopback address
				}
			}
			t.Fatalf("%s: err %v", tc.in, err)
		}
		if err != nil {
			continue
		}
		if tc.same && got != tc.in {
			t.Errorf("%s advertised as %s", tc.in, got)
		}
		if !tc.same {
			host, port, _ := net.SplitHostPort(got)
			if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() || ip.IsLoopback() || port != "7420" {
				t.Errorf("%s advertised as %s, want a dialable host address", tc.in, got)
			}
		}
	}
}
