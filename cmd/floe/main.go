// Command floe continuously materializes Kafka topics into Apache Iceberg
// tables. This package parses commands, flags and configuration and calls
// the one node builder (package node), which wires Floe's packages together.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/floe-io/floe/bench/floebench"
	"github.com/floe-io/floe/cmd/floe/ctl"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/profiling"
)

// Exit codes scripts can rely on: README's table (ctl's for the rest).
const (
	exitOK      = 0
	exitFailure = 1
	// exitUsage: bad flags or arguments; exitConfig: a configuration floe
	// serve refuses (fields, certificates, keys). The README gives both 2.
	exitUsage       = 2
	exitConfig      = 2
	exitUnreachable = 3
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run runs the command line args, prints an error on stderr and returns
// the exit code, so that tests can check the codes of the whole tree.
func run(args []string, stderr io.Writer) int {
	root := rootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "floe:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ctl.ExitCode(err) // ctl's codes; 1 for anything else
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "floe",
		Short:         "Floe materializes Kafka topics into Apache Iceberg tables, exactly once",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	own := []*cobra.Command{serveCmd(), healthCmd(), demoCmd(), versionCmd(), floebench.Command(), tlsCmd()}
	root.AddCommand(own...)
	usageErrors(root, own) // usage.go; ctl's commands make their own
	root.AddCommand(ctl.StatusCommand(), ctl.Command())
	return root
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func serveCmd() *cobra.Command {
	var (
		path            string
		bootstrapExpect int
		join            []string
		recover         bool
		cpuprofile      string
		memprofile      string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Floe node",
		Long: "Run a Floe node with the configuration in --config. Every field can be overridden by an\n" +
			"environment variable: FLOE_ and the field's path in upper case, e.g. FLOE_KAFKA_BOOTSTRAP_SERVERS.",
		Args: serveArgs, // usage.go
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Before anything else, and on stderr whatever the log
			// says: a misspelt variable is the likely cause of a
			// configuration error that follows.
			warnings := config.EnvWarnings(os.Environ())
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "floe: warning:", w)
			}
			cfg, err := config.Load(path, os.Environ())
			if err != nil {
				return &exitError{code: exitConfig, err: err}
			}
			if cmd.Flags().Changed("bootstrap-expect") {
				cfg.Cluster.BootstrapExpect = bootstrapExpect
			}
			if cmd.Flags().Changed("join") {
				cfg.Cluster.Join = join
			}
			if err := cfg.Validate(); err != nil {
				return &exitError{code: exitConfig, err: fmt.Errorf("config: %w", err)}
			}
			if cpuprofile != "" {
				stopProfile, err := profiling.StartCPU(cpuprofile)
				if err != nil {
					return err
				}
				defer stopProfile()
			}
			log := newLogger(cfg.Log, os.Stderr)
			for _, w := range warnings {
				log.Warn(w)
			}
			ecsDefaults(cmd.Context(), &cfg, log)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			applyMemoryLimit(ctx, cfg, log) // memlimit.go
			n, err := newNode(ctx, cfg, log, node.WithRecover(recover), node.WithConfigWarnings(warnings))
			if err != nil {
				if ctx.Err() != nil {
					return nil // stopped while joining
				}
				return err
			}
			<-ctx.Done()
			stop() // a second signal kills the process
			return stopServing(n, cfg, log, memprofile)
		},
	}
	cmd.Flags().StringVarP(&path, "config", "c", "", "path of the YAML configuration (optional when every field comes from FLOE_ variables)")
	cmd.Flags().IntVar(&bootstrapExpect, "bootstrap-expect", 1, "fresh nodes form a new group once this many see each other through --join (1: form alone; 0: only join)")
	cmd.Flags().StringSliceVar(&join, "join", nil, "peers' rpc addresses (host:port); a DNS name stands for all its A records")
	cmd.Flags().StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run here, stopped when the node stops (make bench-kafka)")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	cmd.Flags().StringVar(&memprofile, "memprofile", "", "write a heap profile here when the node is told to stop (floe bench --tables)")
	_ = cmd.Flags().MarkHidden("memprofile")
	cmd.Flags().BoolVar(&recover, "recover", false, "when the group is new and empty, restore tables and offsets from the state backed up in the warehouse")
	return cmd
}

// stopServing writes the heap profile if asked, drains the node within
// the configured timeout and stops it.
func stopServing(n *node.Node, cfg config.Config, log *slog.Logger, memprofile string) error {
	if memprofile != "" {
		if err := profiling.WriteHeap(memprofile); err != nil {
			log.Warn("heap profile", "err", err)
		}
	}
	log.Info("stopping: draining", "timeout", cfg.Cluster.DrainTimeout.D())
	dctx, cancel := context.WithTimeout(context.Background(), cfg.Cluster.DrainTimeout.D())
	defer cancel()
	if err := n.Drain(dctx); err != nil {
		log.Warn("drain incomplete; the others take over through fencing", "err", err)
	}
	return n.Stop()
}

// newNode builds a node through the one builder with this binary's
// version; a start refused because of the configuration exits with
// exitConfig.
func newNode(ctx context.Context, cfg config.Config, log *slog.Logger, opts ...node.Option) (*node.Node, error) {
	n, err := node.New(ctx, cfg, append([]node.Option{node.WithLogger(log), node.WithVersion(version)}, opts...)...)
	if ce := (*node.ConfigError)(nil); errors.As(err, &ce) {
		return nil, &exitError{code: exitConfig, err: err}
	}
	return n, err
}

func healthCmd() *cobra.Command {
	var (
		addr  string
		ready bool
	)
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Exit 0 when the node at --addr is alive (--ready: member of a group with a leader), 4 when it answers not ready, 3 when it does not answer",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
			defer cancel()
			path := "/healthz"
			if ready {
				path = "/readyz"
			}
			client, scheme, err := probeClient()
			if err != nil {
				return &exitError{code: exitConfig, err: err}
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+path, nil)
			if err != nil {
				return &exitError{code: exitConfig, err: err}
			}
			resp, err := client.Do(req)
			if err != nil {
				return &exitError{code: exitUnreachable, err: fmt.Errorf("probing %s: %w", addr, err)}
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return &exitError{code: ctl.ExitNotReady, err: fmt.Errorf("not ready: %s %s", resp.Status, strings.TrimSpace(string(body)))}
			}
			fmt.Fprintln(cmd.OutOrStdout(), strings.TrimPrefix(path, "/"), "ok")
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", envOr("FLOE_ADDR", envOr("FLOE_NODE_ADMIN_ADDR", "127.0.0.1:7421")), "admin address of the node, host:port (env FLOE_ADDR; --admin-addr is the same flag)")
	// --admin-addr: the name container health checks already use, and the
	// one floe status also accepts.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "admin-addr" {
			name = "addr"
		}
		return pflag.NormalizedName(name)
	})
	fs.BoolVar(&ready, "ready", false, "check readiness (/readyz) instead of liveness (/healthz)")
	return cmd
}

// commit is stamped at build time with -ldflags "-X main.commit=..." (make release).
var commit = "unknown"

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "floe", version, "commit", commit)
		},
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// probeClient is the health probe's client. It runs beside the node (the
// container's health check) with the node's environment: when the admin port
// serves TLS (FLOE_ADMIN_TLS_CERT_FILE) it speaks HTTPS to its own node
// without verifying the certificate's name, and under mutual TLS it presents
// the node's own certificate (which then needs the clientAuth usage too).
func probeClient() (*http.Client, string, error) {
	certFile, keyFile := os.Getenv("FLOE_ADMIN_TLS_CERT_FILE"), os.Getenv("FLOE_ADMIN_TLS_KEY_FILE")
	if certFile == "" {
		return http.DefaultClient, "http", nil
	}
	tc := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // probing our own local node
	if os.Getenv("FLOE_ADMIN_TLS_CLIENT_CA_FILE") != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, "", fmt.Errorf("admin.tls: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}, "https", nil
}
