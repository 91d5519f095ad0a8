package ovsdbconn

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// TLSConfig builds the client TLS configuration for ssl: remotes from the
// PEM files, as ovn-nbctl -p/-c/-C do: the peer must present a certificate
// signed by the CA; as in Open vSwitch, its host name is not checked. label
// ("NB", "SB") names the database in messages.
func (o Options) TLSConfig(label string) (*tls.Config, error) {
	var missing []string
	if o.PrivateKey == "" {
		missing = append(missing, "private key (-p)")
	}
	if o.Certificate == "" {
		missing = append(missing, "certificate (-c)")
	}
	if o.CACert == "" {
		missing = append(missing, "CA certificate (-C)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("ssl: %s remote needs a %s", label, JoinAnd(missing))
	}
	keyPEM, err := os.ReadFile(o.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	certPEM, err := os.ReadFile(o.Certificate)
	if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	caPEM, err := os.ReadFile(o.CACert)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	if b, _ := pem.Decode(keyPEM); b == nil {
		return nil, fmt.Errorf("private key %s: no PEM data", o.PrivateKey)
	}
	if b, _ := pem.Decode(certPEM); b == nil {
		return nil, fmt.Errorf("certificate %s: no PEM data", o.Certificate)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate %s with private key %s: %w", o.Certificate, o.PrivateKey, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("CA certificate %s: no PEM certificate found", o.CACert)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
		// Open vSwitch checks the peer's certificate chain against the CA
		// but not its name; do the same instead of the default name check.
		InsecureSkipVerify: true, //nolint:gosec // chain verified below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return fmt.Errorf("%s presented no certificate", label)
			}
			certs := make([]*x509.Certificate, len(raw))
			for i, r := range raw {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return fmt.Errorf("%s certificate: %w", label, err)
				}
				certs[i] = c
			}
			inter := x509.NewCertPool()
			for _, c := range certs[1:] {
				inter.AddCert(c)
			}
			_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
			if err != nil {
				return fmt.Errorf("%s certificate not signed by CA %s: %w", label, o.CACert, err)
			}
			return nil
		},
	}, nil
}

// JoinAnd joins list as "a, b and c".
func JoinAnd(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	s := list[0]
	for _, x := range list[1 : len(list)-1] {
		s += ", " + x
	}
	return s + " and " + list[len(list)-1]
}
