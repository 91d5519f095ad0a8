package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aclc/aclc/lflow"
)

// Metrics are the watcher's Prometheus metrics, in their own registry.
type Metrics struct {
	Registry *prometheus.Registry
	// Compile is the engine's time per batch; Latency the time from the
	// first NB row event of a batch to its delta being emitted.
	Compile, Latency prometheus.Histogram
	// Flows is the current number of flows by stage.
	Flows *prometheus.GaugeVec
	// Batches counts change batches (initial, events, resync).
	Batches *prometheus.CounterVec
	// ZoneFlushes counts flush attempts by result (ok, error).
	ZoneFlushes *prometheus.CounterVec
	// Reconnects counts NB reconnections.
	Reconnects prometheus.Counter
	// ConnectFailures counts the failed attempts to reach the NB at
	// start, one per attempt (all remotes tried once).
	ConnectFailures prometheus.Counter
	// Ready is 1 once the initial NB is compiled and its snapshot is out
	// (see Config.Ready), 0 before.
	Ready prometheus.Gauge
	// Connected is 1 while the watcher has a live NB connection.
	Connected prometheus.Gauge

	flows map[lflow.Stage]int
}

// NewMetrics creates and registers the metrics.
func NewMetrics() *Metrics {
	buckets := prometheus.ExponentialBuckets(10e-6, 2, 22) // 10µs .. ~21s
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Compile: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "aclc_watch_compile_seconds",
			Help: "Time the incremental engine took to compile one NB change batch into a delta.", Buckets: buckets}),
		Latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "aclc_watch_delta_latency_seconds",
			Help: "Time from the first NB row event of a batch to its delta being emitted.", Buckets: buckets}),
		Flows: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "aclc_watch_flows",
			Help: "Current number of ACL-stage logical flows, by stage."}, []string{"stage"}),
		Batches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aclc_watch_batches_total",
			Help: "NB change batches processed, by kind (initial, events, resync)."}, []string{"kind"}),
		ZoneFlushes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aclc_watch_zone_flushes_total",
			Help: "Conntrack zone flush attempts, by result (ok, error)."}, []string{"result"}),
		Reconnects: prometheus.NewCounter(prometheus.CounterOpts{Name: "aclc_watch_nb_reconnects_total",
			Help: "Times the watcher reconnected to the NB."}),
		ConnectFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "aclc_watch_nb_connect_failures_total",
			Help: "Failed attempts to reach the NB at start (every remote tried once per attempt)."}),
		Ready: prometheus.NewGauge(prometheus.GaugeOpts{Name: "aclc_watch_ready",
			Help: "1 once the initial NB is compiled and its snapshot written, 0 before."}),
		Connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "aclc_watch_nb_connected",
			Help: "1 while the watcher has a live connection to the NB."}),
		flows: map[lflow.Stage]int{},
	}
	m.Registry.MustRegister(m.Compile, m.Latency, m.Flows, m.Batches, m.ZoneFlushes, m.Reconnects,
		m.ConnectFailures, m.Ready, m.Connected,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	for _, st := range lflow.ACLStages {
		m.Flows.WithLabelValues(st.Name())
	}
	m.ZoneFlushes.WithLabelValues("ok")
	m.ZoneFlushes.WithLabelValues("error")
	return m
}

func (m *Metrics) setFlows(l *lflow.Listing) {
	clear(m.flows)
	for _, dp := range l.Datapaths {
		for _, f := range dp.Flows {
			m.flows[f.Stage]++
		}
	}
	for st, n := range m.flows {
		m.Flows.WithLabelValues(st.Name()).Set(float64(n))
	}
}

func (m *Metrics) observe(b *Batch) {
	kind := "events"
	switch {
	case b.Initial:
		kind = "initial"
	case b.Resync:
		kind = "resync"
	}
	m.Batches.WithLabelValues(kind).Inc()
	if b.Initial {
		return
	}
	m.Compile.Observe(b.Compile.Seconds())
	m.Latency.Observe(b.Latency.Seconds())
	touched := map[lflow.Stage]bool{}
	for _, dd := range b.Delta.Datapaths {
		for _, f := range dd.Added {
			m.flows[f.Stage]++
			touched[f.Stage] = true
		}
		for _, f := range dd.Removed {
			m.flows[f.Stage]--
			touched[f.Stage] = true
		}
	}
	for st := range touched {
		m.Flows.WithLabelValues(st.Name()).Set(float64(m.flows[st]))
	}
}

func (m *Metrics) flush(err error) {
	if err != nil {
		m.ZoneFlushes.WithLabelValues("error").Inc()
	} else {
		m.ZoneFlushes.WithLabelValues("ok").Inc()
	}
}

// Serve serves the metrics at http://addr/metrics until ctx is done. It
// returns once the listener is open (errors later are logged by the
// server), with the address actually bound.
func (m *Metrics) Serve(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err
		}
	}()
	return ln.Addr().String(), nil
}
