package queue_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
)

// whTimed is what a timed receiver saw of one request.
type whTimed struct {
	attempt   int
	at        time.Time // when the request arrived
	answered  time.Time // when the answer was written
	nextRetry time.Time // as announced; zero on the last attempt
}

// 50 subscriptions fail at once, with the real dispatcher, its default
// pool, TLS receivers on loopback and a sandbox-like schedule (1 s, 2 s,
// +-20 %). 30 answer 503 at once to the first two attempts; 20 are slow:
// they hold the first request 8 s (within the timeout) and answer it 503,
// while the others' retries fall due. Every retry must go out at its
// nextRetry, or as soon as the attempt before it has failed if that lasted
// longer, whatever else is due or in flight.
//
// On time is a few milliseconds. The bound leaves room for a 2-core
// machine loaded ten times over, with the race detector, where a round
// trip can take a second or two (worst seen: 2.8 s). A retry that waits
// for a worker held by a slow receiver is about 7 s late (the hold), one
// that waits for PollInterval, set to 30 s here so that nothing can lean
// on it, up to 30 s: both far past the bound.
func TestDispatcher_RetriesOnTimeUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10 s of real time")
	}
	const (
		subs, slowSubs = 50, 20
		hold           = 8 * time.Second
		bound          = 4 * time.Second
	)
	// NoSync: the disk of a shared machine is not what is measured.
	db, err := bolt.Open(filepath.Join(t.TempDir(), "queue.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	whUpdate(t, db, queue.Init)

	var mu sync.Mutex
	seen := map[string][]whTimed{} // subscription -> its requests, in order
	cert := whLoopbackCert(t)
	var client *http.Client
	var list []*queue.Subscription
	for i := range subs {
		id := fmt.Sprintf("wh_%02d", i)
		slow := i >= subs-slowSubs // last in webhook_next's order: claimed after the others
		fails := 2
		if slow {
			fails = 1
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			at := time.Now()
			var env struct {
				Attempt   int    `json:"attempt"`
				NextRetry string `json:"nextRetry"`
			}
			if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
				t.Errorf("%s: body: %v", id, err)
			}
			if slow && env.Attempt == 0 {
				time.Sleep(hold)
			}
			if env.Attempt < fails {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			got := whTimed{attempt: env.Attempt, at: at, answered: time.Now()}
			if env.NextRetry != "" {
				got.nextRetry, _ = time.Parse(time.RFC3339Nano, env.NextRetry)
			}
			mu.Lock()
			seen[id] = append(seen[id], got)
			mu.Unlock()
		}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		if client == nil {
			// Every receiver has the same certificate.
			roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
			client = queue.NewClient(queue.ClientOptions{AllowPrivate: true, RootCAs: roots, Timeout: 10 * time.Second})
		}
		list = append(list, whSub(id, "s", srv.URL+"/hook", "a"))
	}
	d := queue.NewDispatcher(queue.DispatcherOptions{
		DB: db,
		PolicyFor: func(string) queue.Policy {
			return queue.Policy{Schedule: []time.Duration{time.Second, 2 * time.Second}, Client: client}
		},
		PollInterval: 30 * time.Second,
		Logger:       zerolog.Nop(),
	})
	whRun(t, d)
	whPublish(t, db, list, whEvent("evt_1", "s", "a", time.Now()))
	d.Wake()
	for end := time.Now().Add(time.Minute); whCount(t, db, "webhook_deliveries") > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d deliveries left after a minute", whCount(t, db, "webhook_deliveries"))
		}
	}

	mu.Lock()
	defer mu.Unlock()
	var lates []time.Duration
	var worst time.Duration
	var worstWhat string
	for id, rs := range seen {
		for i := 1; i < len(rs); i++ {
			prev, r := rs[i-1], rs[i]
			if r.at.Before(prev.nextRetry) {
				t.Errorf("%s attempt %d: sent %v before its nextRetry", id, r.attempt, prev.nextRetry.Sub(r.at))
			}
			// Due at the announced time, or when the attempt before
			// failed if it lasted longer than the delay.
			due := prev.nextRetry
			if prev.answered.After(due) {
				due = prev.answered
			}
			late := r.at.Sub(due)
			lates = append(lates, late)
			if late > worst {
				worst, worstWhat = late, fmt.Sprintf("%s attempt %d", id, r.attempt)
			}
		}
	}
	if want := (subs-slowSubs)*2 + slowSubs; len(lates) != want {
		t.Fatalf("got %d retries, want %d", len(lates), want)
	}
	slices.Sort(lates)
	t.Logf("%d retries: median %v late, worst %v (%s)", len(lates), lates[len(lates)/2], worst, worstWhat)
	if worst > bound {
		t.Errorf("a retry went out %v after it was due (%s), want within %v", worst, worstWhat, bound)
	}
}

// whLoopbackCert is a self-signed ECDSA certificate for 127.0.0.1: its
// handshakes cost a fraction of httptest's RSA one's, which counts when
// dozens start at once on a small machine.
func whLoopbackCert(tb testing.TB) tls.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
