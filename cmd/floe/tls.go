package main

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-io/floe/cluster/tlsconf"
)

// tlsCmd makes the certificates of the internal ports' mutual TLS, as
// consul tls ca create and consul tls cert create -server do. The logic is
// in cluster/tlsconf; this wires flags.
func tlsCmd() *cobra.Command {
	c := &cobra.Command{Use: "tls", Short: "Create the CA and node certificates for the internal ports' mutual TLS"}
	ca := &cobra.Command{Use: "ca", Short: "Certificate authority"}
	ca.AddCommand(tlsCACreateCmd())
	cert := &cobra.Command{Use: "cert", Short: "Node certificates"}
	cert.AddCommand(tlsCertCreateCmd())
	c.AddCommand(ca, cert)
	return c
}

func tlsCACreateCmd() *cobra.Command {
	var dir, name string
	var days int
	c := &cobra.Command{
		Use:   "create",
		Short: "Write ca.pem and ca-key.pem: the cluster's CA (ECDSA P-256)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := tlsconf.NewCA(name, time.Duration(days)*24*time.Hour)
			if err != nil {
				return err
			}
			cf, kf, err := p.WriteFiles(dir, "ca")
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "==> CA certificate %s\n==> CA key %s (keep it off the nodes)\n", cf, kf)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", ".", "directory to write the files to")
	c.Flags().StringVar(&name, "common-name", "Floe cluster CA", "the CA's common name")
	c.Flags().IntVar(&days, "days", int(tlsconf.DefaultCAValidity/(24*time.Hour)), "validity in days")
	return c
}

func tlsCertCreateCmd() *cobra.Command {
	var dir, caFile, caKey, node, serverName string
	var days int
	var dns, ips []string
	c := &cobra.Command{
		Use:   "create",
		Short: "Write <node>.pem and <node>-key.pem: a node certificate signed by the CA",
		Long: "Write <node>.pem and <node>-key.pem, a certificate for both ends of the internal ports, with the SANs\n" +
			"the server name (what every node expects of its peers), the node id, localhost, 127.0.0.1 and the\n" +
			"--additional-dnsname and --additional-ipaddress given.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if node == "" {
				// Checked here, not by cobra's MarkFlagRequired, whose
				// error would exit 1 instead of the usage code.
				return &exitError{code: exitUsage, err: errors.New("--node is required: the node id (node.id) the certificate is for")}
			}
			req := tlsconf.CertRequest{NodeID: node, ServerName: serverName, DNSNames: dns, Validity: time.Duration(days) * 24 * time.Hour}
			for _, s := range ips {
				ip := net.ParseIP(s)
				if ip == nil {
					return &exitError{code: exitConfig, err: fmt.Errorf("--additional-ipaddress %q is not an IP address", s)}
				}
				req.IPs = append(req.IPs, ip)
			}
			ca, err := tlsconf.ReadPair(caFile, caKey)
			if err != nil {
				return &exitError{code: exitConfig, err: err}
			}
			p, err := tlsconf.NewCert(ca, req)
			if err != nil {
				return &exitError{code: exitConfig, err: err}
			}
			cf, kf, err := p.WriteFiles(dir, node)
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "==> certificate %s\n==> key %s\n", cf, kf)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&node, "node", "", "the node id (node.id); required")
	f.StringVar(&dir, "dir", ".", "directory to write the files to")
	f.StringVar(&caFile, "ca", "ca.pem", "the CA certificate")
	f.StringVar(&caKey, "key", "ca-key.pem", "the CA key")
	f.StringVar(&serverName, "server-name", tlsconf.DefaultServerName, "the server name (cluster.tls.server_name)")
	f.IntVar(&days, "days", int(tlsconf.DefaultCertValidity/(24*time.Hour)), "validity in days")
	f.StringSliceVar(&dns, "additional-dnsname", nil, "another DNS name for the certificate (repeatable)")
	f.StringSliceVar(&ips, "additional-ipaddress", nil, "another IP address for the certificate (repeatable)")
	return c
}
