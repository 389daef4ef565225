// Package listen is `eudr webhooks listen`: it shows a developer the
// sandbox's webhook deliveries on their own machine, with no certificate,
// no webhooks.ca_file and no receiver of their own to write.
//
// It asks the sandbox for a listener certificate (signed by the development
// CA the sandbox's deliveries trust), serves HTTPS with it on a local port,
// and subscribes that URL to the chosen events. Each delivery is verified
// with the subscription's signing secret (both schemes of
// queue/webhooksig), printed on stdout, optionally forwarded to a local
// app, and answered 204; one whose signatures do not verify is answered 401
// and said why on stderr. When its context ends (Ctrl-C) it deletes the
// subscription.
//
// It is a client of the API like any other: it imports nothing of the
// server's side but the event types, the envelope of API errors and the
// signature scheme.
package listen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/eudr/eudr/server/event"
)

// Defaults of Options.
const (
	DefaultURL    = "http://127.0.0.1:8081"
	DefaultListen = "127.0.0.1:0"
)

// Options are the command's settings.
type Options struct {
	// BaseURL is the sandbox listener's base URL.
	BaseURL string
	// APIKey is a sandbox key (sk_test_) with write scope.
	APIKey string
	// Events are the event types to subscribe to; none means every
	// subscribable type.
	Events []string
	// Listen is the address of the local HTTPS receiver.
	Listen string
	// ForwardTo, when set, is an http(s) URL each verified delivery is
	// POSTed to as well, with the delivery's headers.
	ForwardTo string
	// JSON prints each delivery as one JSON line instead of a summary line
	// and the body, indented.
	JSON bool
	// Version goes into the User-Agent of the requests to the API.
	Version string
	// Stdout gets the deliveries, Stderr everything else.
	Stdout, Stderr io.Writer
	// Now is the clock webhook-timestamp is checked against; time.Now
	// when nil.
	Now func() time.Time
}

// Check returns what is wrong with the options, for the command line to
// show before anything is sent. It fills in the defaults.
func (o *Options) Check() error {
	if o.BaseURL == "" {
		o.BaseURL = DefaultURL
	}
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if err := checkHTTPURL(o.BaseURL); err != nil {
		return fmt.Errorf("--url %q: %v", o.BaseURL, err)
	}
	switch {
	case o.APIKey == "":
		return errors.New("an API key is needed: --api-key or EUDR_API_KEY, a sandbox key (sk_test_...)")
	case strings.HasPrefix(o.APIKey, "sk_live_"):
		return errors.New("the API key is a production key (sk_live_...): webhooks listen works with the sandbox only; use a sandbox key (sk_test_...)")
	case !strings.HasPrefix(o.APIKey, "sk_test_"):
		return errors.New("the API key is not a sandbox key: it must start with sk_test_")
	}
	for _, et := range o.Events {
		if !event.IsSubscribable(et) {
			return fmt.Errorf("--events: %q is not an event type one can subscribe to; the types are %s", et, strings.Join(event.Subscribable, ","))
		}
	}
	if len(o.Events) == 0 {
		o.Events = event.Subscribable
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return fmt.Errorf("--listen %q: %v (want host:port, port 0 for any free one)", o.Listen, err)
	}
	if o.ForwardTo != "" {
		if err := checkHTTPURL(o.ForwardTo); err != nil {
			return fmt.Errorf("--forward-to %q: %v", o.ForwardTo, err)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return errors.New("want an absolute http:// or https:// URL")
	}
	return nil
}

// Run receives deliveries until ctx ends, then deletes the subscription it
// made and returns nil; it returns an error when it cannot start, or when
// the subscription could not be deleted (naming it, to be deleted by hand).
// o must have passed Check.
func Run(ctx context.Context, o Options) error {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	var extra []string
	if ip := net.ParseIP(host); ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every interface: the sandbox reaches it over loopback
	} else if !ip.IsLoopback() {
		extra = append(extra, host)
	}
	target := "https://" + net.JoinHostPort(host, port)

	sandbox := newClient(o)
	issued, err := sandbox.listenerCertificate(ctx, extra)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair([]byte(issued.Certificate), []byte(issued.PrivateKey))
	if err != nil {
		return fmt.Errorf("the listener certificate the sandbox issued: %w", err)
	}
	sub, err := sandbox.subscribe(ctx, target, o.Events)
	if err != nil {
		return err
	}

	// The port was bound before the subscription was made: a delivery
	// arriving before Serve waits in the accept queue.
	srv := &http.Server{
		Handler:           newReceiver(o, sub.SigningSecret),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // a client's failed handshake is not ours to print
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()

	fmt.Fprintf(o.Stderr, "Ready: listening on %s, subscription %s, events %s\n", target, sub.WebhookID, strings.Join(sub.EventTypes, ","))
	fmt.Fprintf(o.Stderr, "Signing secret: %s (every delivery is verified with it)\n", sub.SigningSecret)
	if o.ForwardTo != "" {
		fmt.Fprintf(o.Stderr, "Forwarding verified deliveries to %s, with their signature headers\n", o.ForwardTo)
	}
	fmt.Fprintln(o.Stderr, "Press Ctrl-C to stop: the subscription is deleted.")

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	// The subscription first, so the sandbox stops sending; then the
	// receiver, letting a delivery being answered finish.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	delErr := sandbox.unsubscribe(stopCtx, sub.WebhookID)
	if delErr == nil {
		fmt.Fprintf(o.Stderr, "Deleted subscription %s.\n", sub.WebhookID)
	} else {
		delErr = fmt.Errorf("%w; delete subscription %s yourself (DELETE %s%s/webhooks/%s)", delErr, sub.WebhookID, o.BaseURL, eudrPrefix, sub.WebhookID)
	}
	_ = srv.Shutdown(stopCtx)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return errors.Join(fmt.Errorf("receiver: %w", serveErr), delErr)
	}
	return delErr
}
