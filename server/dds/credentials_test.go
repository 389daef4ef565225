package dds_test

import (
	"context"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

func credentialsRequest(endpoint string) *dds.CredentialsRequest {
	user, key, client := "op-user", "s3cret-auth-key", "eudr-test"
	req := &dds.CredentialsRequest{Username: &user, AuthKey: &key, ClientID: &client}
	if endpoint != "" {
		req.Endpoint = &endpoint
	}
	return req
}

// TestService_Credentials: credentials are stored with the auth key sealed
// under the key file and bound to the tenant, and read back without it.
func TestService_Credentials(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	if _, err := r.s.FindCredentials(ctx, production); !isNotFound(err) || !strings.Contains(err.Error(), "EU system credentials") {
		t.Errorf("FindCredentials before any: %v, want apierr.NotFound naming the credentials", err)
	}
	_, err := r.s.PutCredentials(ctx, production, &dds.CredentialsRequest{})
	wantError(t, "PutCredentials without fields", err, 400, apierr.DetailRequired, apierr.DetailRequired, apierr.DetailRequired)
	req := credentialsRequest(dds.EndpointAcceptance)
	if err := r.s.ValidateCredentials(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.PutCredentials(ctx, production, req); err != nil {
		t.Fatal(err)
	}
	c, err := r.s.FindCredentials(ctx, production)
	if err != nil {
		t.Fatal(err)
	}
	if c.Username != "op-user" || c.ClientID != "eudr-test" || c.Endpoint != dds.EndpointAcceptance || !c.UpdatedAt.Equal(start) {
		t.Errorf("stored: %+v", c)
	}
	if strings.Contains(string(c.SealedAuthKey), "s3cret") {
		t.Errorf("the auth key is stored in the clear")
	}
	if key, err := r.sealer.Open(c.SealedAuthKey, production.String()); err != nil || string(key) != "s3cret-auth-key" {
		t.Errorf("the sealed auth key opens as %q, %v", key, err)
	}
	if _, err := r.sealer.Open(c.SealedAuthKey, sandbox.String()); err == nil {
		t.Errorf("the sealed auth key opens for another tenant")
	}
	if _, err := r.s.FindCredentials(ctx, sandbox); !isNotFound(err) {
		t.Errorf("credentials of another environment: %v", err)
	}
	for endpoint, want := range map[string]string{"": endpoints.Production, dds.EndpointProduction: endpoints.Production,
		dds.EndpointAcceptance: endpoints.Acceptance, "https://relay.example/tracesnt": "https://relay.example/tracesnt"} {
		if got := r.s.EndpointURL(endpoint); got != want {
			t.Errorf("EndpointURL(%q) = %q, want %q", endpoint, got, want)
		}
	}
}

// TestService_ValidateCredentials: every problem at once; an endpoint
// given with credentials is "production", "acceptance" or an https URL
// without user name or password, not on an address the guard refuses
// (address literals only here: names are resolved).
func TestService_ValidateCredentials(t *testing.T) {
	r := newRig(t, nil)
	long := strings.Repeat("k", 257)
	for _, tc := range []struct {
		name string
		req  *dds.CredentialsRequest
		want []string // code at field
	}{
		{"Empty", &dds.CredentialsRequest{}, []string{"REQUIRED at username", "REQUIRED at authKey", "REQUIRED at clientId"}},
		{"TooLong", &dds.CredentialsRequest{Username: &long, AuthKey: &long, ClientID: &long},
			[]string{"INVALID_VALUE at username", "INVALID_VALUE at authKey", "INVALID_VALUE at clientId"}},
		{"Production", credentialsRequest(dds.EndpointProduction), nil},
		{"Acceptance", credentialsRequest(dds.EndpointAcceptance), nil},
		{"PrivateNetwork", credentialsRequest("https://10.1.2.3/tracesnt"), nil},
		{"FTP", credentialsRequest("ftp://relay.example"), []string{"INVALID_VALUE at endpoint"}},
		{"PlainHTTP", credentialsRequest("http://10.1.2.3/tracesnt"), []string{"INVALID_VALUE at endpoint"}},
		{"UserInfo", credentialsRequest("https://user:pw@10.1.2.3/tracesnt"), []string{"INVALID_VALUE at endpoint"}},
		{"Loopback", credentialsRequest("https://127.0.0.1:8443/tracesnt"), []string{"TARGET_NOT_ALLOWED at endpoint"}},
		{"LinkLocal", credentialsRequest("https://169.254.169.254/latest/meta-data/"), []string{"TARGET_NOT_ALLOWED at endpoint"}},
		{"IPv6LinkLocal", credentialsRequest("https://[fe80::1]/tracesnt"), []string{"TARGET_NOT_ALLOWED at endpoint"}},
		{"Unspecified", credentialsRequest("https://0.0.0.0/"), []string{"TARGET_NOT_ALLOWED at endpoint"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			if err := r.s.ValidateCredentials(context.Background(), tc.req); err != nil {
				e := apierr.From(err)
				if e.Status != apierr.StatusBadRequest {
					t.Errorf("status %d, want 400", e.Status)
				}
				for _, d := range e.Details {
					got = append(got, d.Code+" at "+d.Field)
					if d.Field == "endpoint" && d.Issue != dds.IssueEndpointURL && d.Issue != dds.IssueEndpointAddress {
						t.Errorf("endpoint issue %q", d.Issue)
					}
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEndpoints_Problem(t *testing.T) {
	strict, relay := dds.Endpoints{}, dds.Endpoints{AllowPrivate: true}
	for _, tc := range []struct {
		e        dds.Endpoints
		endpoint string
		schemes  []string
		want     string // detail code; "" none
	}{
		{strict, "https://127.0.0.1/tracesnt", []string{"https"}, apierr.DetailTargetNotAllowed},
		{relay, "https://127.0.0.1/tracesnt", []string{"https"}, ""},
		{relay, "http://127.0.0.1/tracesnt", []string{"https"}, apierr.DetailInvalidValue},
		{relay, "http://127.0.0.1/tracesnt", []string{"https", "http"}, ""},
		{strict, "http://10.0.0.7/tracesnt", []string{"https", "http"}, ""},
		{strict, "https://relay.example", []string{"https"}, ""}, // names are not resolved here
		{strict, "relay.example", []string{"https"}, apierr.DetailInvalidValue},
		{strict, "https:relay.example", []string{"https"}, apierr.DetailInvalidValue},
	} {
		got := ""
		if d := tc.e.Problem("f", tc.endpoint, tc.schemes...); d != nil {
			got = d.Code
		}
		if got != tc.want {
			t.Errorf("%+v.Problem(%s, %v) = %q, want %q", tc.e, tc.endpoint, tc.schemes, got, tc.want)
		}
	}
}

// TestService_CredentialsOperatorAccessIdentifier: an operator access
// identifier stored with the credentials goes with every call the
// production EU system receives; one that does not fit the EU type is
// refused with the rest.
func TestService_CredentialsOperatorAccessIdentifier(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	for _, bad := range []string{"", "OP 42", "OP-0123456789ABCD", "OP\t42"} {
		req := credentialsRequest("")
		req.OperatorAccessIdentifier = &bad
		wantError(t, "operatorAccessIdentifier "+bad, r.s.ValidateCredentials(ctx, req), 400, apierr.DetailInvalidValue)
	}
	r.declarable(t, production, "bat_1")
	d := r.mustDraft(t, production, request("bat_1"))
	req := credentialsRequest("")
	id := "OP-0042"
	req.OperatorAccessIdentifier = &id
	if _, err := r.s.PutCredentials(ctx, production, req); err != nil {
		t.Fatal(err)
	}
	if c, err := r.s.FindCredentials(ctx, production); err != nil || c.OperatorAccessIdentifier != id {
		t.Fatalf("stored: %+v %v", c, err)
	}
	if _, err := r.submit(production, d.ID); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, production, d.ID, storage.DDSSubmitted)
	r.eu.mu.Lock()
	defer r.eu.mu.Unlock()
	for _, cr := range r.eu.creds {
		if cr.OperatorAccessIdentifier != id {
			t.Errorf("a call with %+v, want operator access identifier %s", cr, id)
		}
	}
}
