package watch_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/watch"
)

// TestMetricsEndpoint runs a watcher with metrics on a real NB, makes one
// change, and reads the Prometheus text endpoint.
func TestMetricsEndpoint(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl")
	sb, ctx := startNB(t)
	m := watch.NewMetrics()
	addr, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, sb.NB, watch.Config{Metrics: m})
	if _, err := sb.NBCtl(ctx, "ls-add", "sw0", "--", "acl-add", "sw0", "to-lport", "1000", "ip4", "allow-related"); err != nil {
		t.Fatal(err)
	}
	want := mustParse(t, compileLive(t, ctx, sb.NB))
	w.waitSnapshot(t, "aclc compile --nb", want, 5*time.Second)
	byStage := map[string]int{}
	for _, dp := range want.Datapaths {
		for _, f := range dp.Flows {
			byStage[f.Stage.Name()]++
		}
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`aclc_watch_compile_seconds_count 1`,
		`aclc_watch_delta_latency_seconds_bucket`,
		`aclc_watch_batches_total{kind="events"} 1`,
		`aclc_watch_batches_total{kind="initial"} 1`,
		`aclc_watch_zone_flushes_total{result="ok"} 0`,
		`aclc_watch_nb_reconnects_total 0`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for st, n := range byStage {
		if want := fmt.Sprintf("aclc_watch_flows{stage=%q} %d\n", st, n); !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", body)
	}
}
