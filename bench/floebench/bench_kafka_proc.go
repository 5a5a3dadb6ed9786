package floebench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/internal/embedded"
)

// kafkaProc is one measured subprocess: Floe or the baseline.
type kafkaProc struct {
	cmd   *exec.Cmd
	start time.Time
	done  chan struct{}
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat
// (100 on every Linux this runs on).
const clockTick = 100

func startKafkaProc(cmd *exec.Cmd, logPath string) (*kafkaProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	p := &kafkaProc{cmd: cmd, start: time.Now(), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// cpu is the process's user and system CPU so far, in seconds.
func (p *kafkaProc) cpu() float64 { return procCPU(p.cmd.Process.Pid) }

// procCPU is a process's user and system CPU so far, in seconds; 0 when
// it cannot be read.
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces): state is the
	// first, utime the 12th and stime the 13th.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(ut+st) / clockTick
}

// peakRSS is the process's resident high-water mark (VmHWM), in bytes.
func (p *kafkaProc) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func (p *kafkaProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the process to stop (SIGTERM: Floe drains and writes its
// profile) and kills it after a minute.
func (p *kafkaProc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// command builds the subprocess for who over topic, in dir, and returns it
// with the directory of its table.
func (kb *kafkaBench) command(who, topic, format, dir string, profile bool) (*exec.Cmd, string, error) {
	wh := filepath.Join(dir, "warehouse")
	if who == "baseline" {
		cmd := exec.Command(kb.baselineBin, "--brokers", kb.brokers, "--topic", topic, "--warehouse", "file://"+wh,
			"--table", "bench.baseline", "--interval", kb.interval.String())
		return cmd, filepath.Join(wh, "bench", "baseline"), nil
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cfgPath, err := kb.floeConfig(topic, format, dir, wh)
	if err != nil {
		return nil, "", err
	}
	args := []string{"serve", "-c", cfgPath}
	if profile && kb.floeProfile != "" {
		args = append(args, "--cpuprofile", profilePath(kb.floeProfile, format))
	}
	return exec.Command(bin, args...), filepath.Join(wh, "bench", "floe"), nil
}

// profilePath is where the Floe run of format writes its CPU profile: the
// JSON run at path, the Avro and Protobuf runs beside it with the format
// before the extension (bench-kafka-floe-avro.prof).
func profilePath(path, format string) string {
	if format == "" || format == "json" {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + format + ext
}

// floeConfig writes a one-node configuration mapping topic, of format, to
// bench.floe.
func (kb *kafkaBench) floeConfig(topic, format, dir, wh string) (string, error) {
	var addrs [3]string
	for i := range addrs {
		a, err := embedded.FreeAddr()
		if err != nil {
			return "", err
		}
		addrs[i] = a
	}
	cfg := map[string]any{
		"node":            map[string]any{"id": "bench", "data_dir": filepath.Join(dir, "node"), "raft_addr": addrs[0], "admin_addr": addrs[1], "rpc_addr": addrs[2]},
		"kafka":           map[string]any{"bootstrap_servers": strings.Split(kb.brokers, ",")},
		"warehouse":       map[string]any{"location": "file://" + wh},
		"commit_interval": kb.interval.String(),
		"tables":          []map[string]any{{"topic": topic, "namespace": "bench", "name": "floe", "format": format, "start_offset": "earliest"}},
		"log":             map[string]any{"level": "warn"},
	}
	if format != "json" {
		cfg["schema_registry"] = map[string]any{"url": kb.registry.URL}
	}
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "floe.yaml")
	return path, os.WriteFile(path, raw, 0o644)
}

// waitTotal waits until the table in tableDir has a snapshot holding at
// least want records and returns the snapshots then.
func waitTotal(ctx context.Context, p *kafkaProc, tableDir string, want int64, timeout time.Duration) ([]snapInfo, error) {
	deadline := time.Now().Add(timeout)
	var have int64
	for time.Now().Before(deadline) {
		if p.exited() {
			return nil, fmt.Errorf("%s exited (see its log): %v", p.cmd.Path, p.cmd.ProcessState)
		}
		if snaps, err := readSnapshots(tableDir); err == nil && len(snaps) > 0 {
			if have = snaps[len(snaps)-1].total; have >= want {
				return snaps, nil
			}
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%d of %d records committed after %s", have, want, timeout)
}
