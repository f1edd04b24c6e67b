package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/switchtender/switchtender/forge"
	"github.com/switchtender/switchtender/store"
)

// Delivery outcomes as the metrics count them (switchtender_forge_deliveries_total).
const (
	deliveryStored     = "stored"
	deliveryDuplicate  = "duplicate"
	deliveryUnsigned   = "unsigned"
	deliveryMalformed  = "malformed"
	deliveryTooLarge   = "too_large"
	deliveryIgnored    = "ignored"
	deliveryNoProject  = "unknown_repository"
	deliveryNoForge    = "unknown_forge"
	deliveryStoreError = "store_error"
)

// startWebhooks serves POST /webhooks/FORGE on webhook_listen (plain HTTP:
// TLS is a reverse proxy's job); with no webhook_listen it does nothing.
func (s *Server) startWebhooks() (*httpServer, error) {
	addr := s.config().Server.WebhookListen
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for webhooks on %s: %w; choose another webhook_listen, or stop what holds the port", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks/{forge}", s.receiveWebhook)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 32 << 10}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serving webhooks", "addr", addr, "err", err)
		}
	}()
	return &httpServer{srv: hs, ln: ln}, nil
}

// WebhookAddr is the address webhook_listen is bound to (useful with port
// 0), or "" when none is served.
func (s *Server) WebhookAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hookSrv == nil {
		return ""
	}
	return s.hookSrv.ln.Addr().String()
}

// receiveWebhook is POST /webhooks/FORGE: it fails closed and loses
// nothing. A forge block that is not configured is 404; a body over
// forge.MaxBody 413; a delivery whose signature or token does not match the
// forge's webhook_secret 401, and nothing is stored; one that does not read
// as the forge's payload 400. A verified delivery is stored (de-duplicated
// by its delivery id) before the 200 that answers it, so a delivery
// answered is never lost to a crash.
func (s *Server) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("forge")
	fc, ok := s.config().Forges[name]
	if !ok {
		s.countDelivery("", deliveryNoForge)
		http.Error(w, "no forge of that name is configured", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, forge.MaxBody))
	if err != nil {
		s.countDelivery(name, deliveryTooLarge)
		http.Error(w, fmt.Sprintf("the body is over %d bytes, or could not be read", forge.MaxBody), http.StatusRequestEntityTooLarge)
		return
	}
	t := forge.Type(fc.Type)
	if err := forge.Verify(t, fc.WebhookSecret, r.Header, body); err != nil {
		s.countDelivery(name, deliveryUnsigned)
		s.log.Warn("forge: a delivery was refused: its signature does not match the webhook secret", "forge", name, "remote", r.RemoteAddr, "err", err.Error())
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	ev, err := forge.Parse(t, r.Header, body)
	if err != nil {
		s.countDelivery(name, deliveryMalformed)
		http.Error(w, "the delivery does not read as a "+fc.Type+" payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	code, outcome, say := s.storeDelivery(name, ev)
	s.countDelivery(name, outcome)
	w.WriteHeader(code)
	_, _ = io.WriteString(w, say+"\n")
	if outcome == deliveryStored {
		killAfterAnswer(w)
	}
}

// storeDelivery stores verified delivery ev of forge block name, unless it
// is one nothing acts on: it returns the HTTP status, the metric's outcome
// and a sentence for the forge's delivery log.
func (s *Server) storeDelivery(name string, ev forge.Event) (int, string, string) {
	switch {
	case ev.Kind == forge.KindIgnored || ev.Kind == forge.KindPing:
		return http.StatusOK, deliveryIgnored, "ignored: Switchtender acts on pull requests and their comments only"
	case s.projectFor(name, ev.Repository) == nil:
		s.log.Info("forge: a delivery for a repository no project names was ignored", "forge", name, "repository", s.scrub(ev.Repository), "delivery", ev.DeliveryID)
		return http.StatusOK, deliveryNoProject, "ignored: no project names this repository"
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return http.StatusInternalServerError, deliveryStoreError, "the delivery could not be encoded"
	}
	d := &store.ForgeDelivery{Forge: name, DeliveryID: ev.DeliveryID, Event: raw, Received: time.Now()}
	switch err := s.db.AddForgeDelivery(d); {
	case errors.Is(err, store.ErrDuplicate):
		return http.StatusOK, deliveryDuplicate, "already received"
	case err != nil:
		s.log.Error("forge: storing a delivery", "forge", name, "delivery", ev.DeliveryID, "err", err)
		return http.StatusServiceUnavailable, deliveryStoreError, "the delivery could not be stored; deliver it again"
	}
	s.forge.kick()
	return http.StatusOK, deliveryStored, "stored"
}

// countDelivery counts one delivery by forge and outcome.
func (s *Server) countDelivery(name, outcome string) {
	s.metrics.ForgeDeliveries.WithLabelValues(name, outcome).Inc()
}
