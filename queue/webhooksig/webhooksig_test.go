package webhooksig_test

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
)

// Vectors computed independently with Python's hmac module:
//
//	hmac.new(secret.encode(), body, sha256).hexdigest()
//	key = base64.urlsafe_b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
//	base64.b64encode(hmac.new(key, b"evt_1.1795000000." + body, sha256).digest())
//
// The secret is the example of the Standard Webhooks specification.
const (
	secret     = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body       = `{"eventType":"webhook.ping","eventId":"evt_1","data":{}}`
	wantHex    = "f9a7e8bdecc35e42d7f25797f84ff765ad1ae0773f6a6084958dbc21e51297a2"
	wantStd    = "v1,57+gq2OMXIcI94Gzo/U4szG8AKOYXGw/PX0xKUHLYqM="
	msgID      = "evt_1"
	unixSecond = 1795000000
)

func TestSign(t *testing.T) {
	if got := webhooksig.Sign(secret, []byte(body)); got != wantHex {
		t.Errorf("Sign: got %s, want %s", got, wantHex)
	}
	if got := webhooksig.SignStandard(secret, msgID, time.Unix(unixSecond, 0), []byte(body)); got != wantStd {
		t.Errorf("SignStandard: got %s, want %s", got, wantStd)
	}
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name, secret, body, sig string
		want                    error
	}{
		{"OK", secret, body, wantHex, nil},
		{"UpperCaseHex", secret, body, strings.ToUpper(wantHex), nil},
		{"Missing", secret, body, "", webhooksig.ErrNoSignature},
		{"OtherBody", secret, body + " ", wantHex, webhooksig.ErrMismatch},
		{"OtherSecret", secret + "x", body, wantHex, webhooksig.ErrMismatch},
		{"NotHex", secret, body, "zz", webhooksig.ErrMismatch},
		{"Truncated", secret, body, wantHex[:62], webhooksig.ErrMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := webhooksig.Verify(tc.secret, []byte(tc.body), tc.sig); !errors.Is(err, tc.want) {
				t.Errorf("Verify: got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyStandard(t *testing.T) {
	at := time.Unix(unixSecond, 0)
	headers := func(id, ts, sig string) http.Header {
		h := http.Header{}
		h.Set(webhooksig.HeaderWebhookID, id)
		h.Set(webhooksig.HeaderWebhookTimestamp, ts)
		h.Set(webhooksig.HeaderWebhookSignature, sig)
		return h
	}
	const ts = "1795000000"
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		now  time.Time
		want error
	}{
		{"OK", headers(msgID, ts, wantStd), body, at, nil},
		{"WithinTolerance", headers(msgID, ts, wantStd), body, at.Add(4 * time.Minute), nil},
		{"SeveralSignatures", headers(msgID, ts, "v1,AAAA "+wantStd), body, at, nil},
		{"OtherVersionIgnored", headers(msgID, ts, "v1a,"+wantStd[3:]), body, at, webhooksig.ErrMismatch},
		{"TooOld", headers(msgID, ts, wantStd), body, at.Add(6 * time.Minute), webhooksig.ErrTimestamp},
		{"FromTheFuture", headers(msgID, ts, wantStd), body, at.Add(-6 * time.Minute), webhooksig.ErrTimestamp},
		{"BadTimestamp", headers(msgID, "soon", wantStd), body, at, webhooksig.ErrTimestamp},
		{"OtherID", headers("evt_2", ts, wantStd), body, at, webhooksig.ErrMismatch},
		{"OtherBody", headers(msgID, ts, wantStd), body + "x", at, webhooksig.ErrMismatch},
		{"Missing", headers(msgID, ts, ""), body, at, webhooksig.ErrNoSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooksig.VerifyStandard(secret, tc.h, []byte(tc.body), webhooksig.DefaultTolerance, tc.now)
			if !errors.Is(err, tc.want) {
				t.Errorf("VerifyStandard: got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	pat := regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	seen := map[string]bool{}
	for range 100 {
		s, err := webhooksig.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !pat.MatchString(s) || seen[s] {
			t.Fatalf("NewSecret: got %q (seen before: %v), want whsec_ + 43 base64url characters, unique", s, seen[s])
		}
		seen[s] = true
		// A standard-base64 form of the same key verifies the same signature.
		sig := webhooksig.SignStandard(s, msgID, time.Unix(unixSecond, 0), []byte(body))
		if sig != webhooksig.SignStandard(webhooksig.StandardSecret(s), msgID, time.Unix(unixSecond, 0), []byte(body)) {
			t.Fatalf("StandardSecret(%q) signs differently", s)
		}
	}
}
