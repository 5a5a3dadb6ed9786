package procstatus

import (
	"maps"
	"runtime"
	"testing"
)

func TestParse(t *testing.T) {
	status := "Name:\tfloe\nVmHWM:\t 1300000 kB\nVmRSS:\t 1229604 kB\nRssAnon:\t 1158612 kB\nRssFile:\t   70992 kB\nRssShmem:\t     100 kB\nThreads:\t12\n"
	for _, c := range []struct {
		name string
		keys []string
		want map[string]uint64
	}{
		{"fields asked for, in bytes", []string{"RssFile", "RssShmem"}, map[string]uint64{"RssFile": 70992 << 10, "RssShmem": 100 << 10}},
		{"absent fields are absent", []string{"VmRSS", "VmSwap"}, map[string]uint64{"VmRSS": 1229604 << 10}},
		{"nothing asked", nil, map[string]uint64{}},
	} {
		got, err := Parse([]byte(status), c.keys...)
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := Parse([]byte("Threads:\t12\nVmRSS:\tmany kB\n"), "VmRSS"); err == nil {
		t.Error("a field that is not a figure parsed")
	}
}

func TestRead(t *testing.T) {
	got, err := Read("VmRSS", "RssFile")
	if runtime.GOOS != "linux" {
		if err == nil {
			t.Fatal("read a status off Linux")
		}
		return
	}
	if err != nil || got["VmRSS"] == 0 || got["RssFile"] == 0 {
		t.Fatalf("own status: %v, %v", got, err)
	}
}
