package nbschema_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
)

// pki writes a CA and a certificate signed by it, as ovs-pki would.
type pki struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	dir    string
}

func newPKI(t *testing.T, dir, name string) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{caCert: cert, caKey: key, dir: dir}
	writePEM(t, filepath.Join(dir, name+"-ca.pem"), "CERTIFICATE", der)
	return p
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// issue writes name-privkey.pem and name-cert.pem signed by the CA.
func (p *pki) issue(t *testing.T, name string, serial int64) (keyFile, certFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(p.dir, name+"-privkey.pem")
	certFile = filepath.Join(p.dir, name+"-cert.pem")
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	writePEM(t, certFile, "CERTIFICATE", der)
	return keyFile, certFile
}

// TestConnectSSL runs an NB ovsdb-server on an pssl: remote and connects
// with -p/-c/-C files; a client certificate from another CA is refused,
// and so is a server that the client's CA did not sign.
func TestConnectSSL(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-server", "ovsdb-tool")
	dir := t.TempDir()
	ca := newPKI(t, dir, "good")
	srvKey, srvCert := ca.issue(t, "server", 2)
	cliKey, cliCert := ca.issue(t, "client", 3)
	other := newPKI(t, dir, "other")
	badKey, badCert := other.issue(t, "stranger", 4)

	db := filepath.Join(dir, "nb.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, ovnsandbox.NBSchema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v: %s", err, out)
	}
	port := testenv.FreePort(t)
	cmd := exec.Command("ovsdb-server", "--no-chdir",
		"--remote="+fmt.Sprintf("pssl:%d:127.0.0.1", port),
		"--private-key="+srvKey, "--certificate="+srvCert, "--ca-cert="+filepath.Join(dir, "good-ca.pem"),
		"--unixctl="+filepath.Join(dir, "nb.ctl"), "--log-file="+filepath.Join(dir, "nb.log"), db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ovsdb-server did not listen on %s", addr)
		}
	}
	remote := "ssl:" + addr
	goodCA := filepath.Join(dir, "good-ca.pem")
	otherCA := filepath.Join(dir, "other-ca.pem")

	s, err := nbschema.LoadLive(context.Background(), nbschema.Options{Remotes: remote,
		PrivateKey: cliKey, Certificate: cliCert, CACert: goodCA, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("LoadLive over SSL: %v", err)
	}
	if len(s.Switches) != 0 {
		t.Errorf("fresh NB has %d switches", len(s.Switches))
	}

	// The server's certificate is not signed by the CA we trust.
	_, err = nbschema.Connect(context.Background(), nbschema.Options{Remotes: remote,
		PrivateKey: badKey, Certificate: badCert, CACert: otherCA, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "NB certificate not signed by CA "+otherCA) {
		t.Errorf("connecting with the wrong CA: %v, want a certificate error naming %s", err, otherCA)
	}
	t.Logf("wrong CA: %v", err)
	// Our certificate is not signed by the CA the server trusts.
	_, err = nbschema.Connect(context.Background(), nbschema.Options{Remotes: remote,
		PrivateKey: badKey, Certificate: badCert, CACert: goodCA, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach NB at "+remote) {
		t.Errorf("connecting with a stranger's certificate: %v, want a refusal", err)
	}
	t.Logf("stranger: %v", err)
	// A key that does not belong to the certificate.
	_, err = nbschema.Connect(context.Background(), nbschema.Options{Remotes: remote,
		PrivateKey: badKey, Certificate: cliCert, CACert: goodCA})
	if err == nil || !strings.Contains(err.Error(), "certificate "+cliCert+" with private key "+badKey) {
		t.Errorf("mismatched key: %v", err)
	}
}
