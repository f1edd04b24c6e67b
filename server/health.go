package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpServer is the metrics_listen listener: /metrics, /healthz, /readyz.
type httpServer struct {
	srv *http.Server
	ln  net.Listener
}

// startHTTP serves /metrics (Prometheus text), /healthz (the process is up
// and the store open) and /readyz (SSH listens and the store can take a
// write) on metrics_listen; with no metrics_listen it does nothing. None
// of them writes.
func (s *Server) startHTTP() (*httpServer, error) {
	addr := s.config().Server.MetricsListen
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for metrics on %s: %w; choose another metrics_listen, or stop what holds the port", addr, err)
	}
	// A metrics_listen off loopback is a warning of the judgement
	// (metricsExposure, judge.go), logged by serve at start.
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.Reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{s}, Timeout: 10 * time.Second}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { answerHealth(w, s.db.Ping()) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) { answerHealth(w, s.ready()) })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serving metrics", "addr", addr, "err", err)
		}
	}()
	return &httpServer{srv: hs, ln: ln}, nil
}

// close stops the listener, giving requests in flight a second.
func (h *httpServer) close() {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		_ = h.srv.Close()
	}
}

// ready is nil when the attached front door listens and the store can take writes (checked
// without writing: store.Ready).
func (s *Server) ready() error {
	s.mu.Lock()
	up := s.door != nil && s.door.Listening() && !s.closed
	s.mu.Unlock()
	if !up {
		return errors.New("SSH is not listening")
	}
	return s.db.Ready()
}

// answerHealth writes 200 "ok", or 503 with the reason.
func answerHealth(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, err)
		return
	}
	fmt.Fprintln(w, "ok")
}

// MetricsAddr is the address /metrics listens on ("" without
// metrics_listen; useful with port 0).
func (s *Server) MetricsAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.httpSrv == nil {
		return ""
	}
	return s.httpSrv.ln.Addr().String()
}

// slogPrinter gives promhttp's error log to the operator log.
type slogPrinter struct{ s *Server }

func (p slogPrinter) Println(v ...any) { p.s.log.Error("serving metrics", "err", fmt.Sprint(v...)) }
