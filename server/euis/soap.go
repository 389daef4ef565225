package euis

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/eudr/eudr/queue/netguard"
)

// SOAPOptions configure a SOAPClient. The zero value is the production
// setting.
type SOAPOptions struct {
	// Now is the clock of the WS-Security timestamps; time.Now when nil.
	// The information system refuses a Created more than 5 minutes from its
	// own clock.
	Now func() time.Time
	// Rand is the source of nonces and token IDs; crypto/rand when nil.
	Rand io.Reader
	// CallsPerSecond bounds the calls of the client: MaxCallsPerSecond when
	// 0, no bound when negative (tests). The bound of the information
	// system is per IP address, so an appliance has one SOAPClient.
	CallsPerSecond float64
	// TimestampTTL is Expires minus Created of the wsu:Timestamp; 5 minutes
	// when 0.
	TimestampTTL time.Duration
	// MaxResponseBytes bounds an answer; 64 MiB when 0.
	MaxResponseBytes int64
	// EchoPath replaces ServiceEcho as the echo service's path.
	EchoPath string
	// OnExchange, when set, is called after each call with the request and
	// answer as sent and received (for the audit trail). The request holds
	// the username, nonce and digest, never the authentication key. It is
	// called from the calling goroutine and must not keep the slices.
	OnExchange func(Exchange)
}

// Exchange is one call to the information system.
type Exchange struct {
	Operation  string // submitDds, getDds, ...
	URL        string
	Request    []byte
	Response   []byte // nil when no answer came
	StatusCode int    // 0 when no answer came
	Duration   time.Duration
	Err        error // the call's error, if any
}

// SOAPClient is the Client of the TRACES NT EUDR V3 SOAP services.
type SOAPClient struct {
	hc      *http.Client
	opts    SOAPOptions
	limiter *rate.Limiter
}

var _ Client = (*SOAPClient)(nil)

// NewSOAPClient returns a client that sends its requests with hc
// (NewHTTPClient's production client when nil). Whatever hc's redirect
// policy, the SOAPClient follows no redirect: that would post the
// UsernameToken again to the host a Location names. A 3xx is an HTTPError.
func NewSOAPClient(hc *http.Client, opts SOAPOptions) *SOAPClient {
	if hc == nil {
		hc = NewHTTPClient(HTTPOptions{})
	} else {
		own := *hc
		own.CheckRedirect = netguard.NoRedirects
		hc = &own
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	if opts.TimestampTTL <= 0 {
		opts.TimestampTTL = 5 * time.Minute
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 64 << 20
	}
	limit := rate.Limit(MaxCallsPerSecond)
	switch {
	case opts.CallsPerSecond > 0:
		limit = rate.Limit(opts.CallsPerSecond)
	case opts.CallsPerSecond < 0:
		limit = rate.Inf
	}
	return &SOAPClient{hc: hc, opts: opts, limiter: rate.NewLimiter(limit, 1)}
}

// Submit validates s (a Violations error when it breaks a rule: nothing is
// sent) and files it with submitDds.
func (c *SOAPClient) Submit(ctx context.Context, cr Credentials, s Statement) (string, error) {
	if err := Validate(s); err != nil {
		return "", err
	}
	var out struct {
		UUID string `xml:"uuid"`
	}
	req := submitDdsRequest{OperatorRole: s.OperatorRole, Statement: statementXML(s)}
	if err := c.call(ctx, cr, opSubmit, req, &out); err != nil {
		return "", err
	}
	uuid := strings.TrimSpace(out.UUID)
	if uuid == "" {
		return "", &ProtocolError{Operation: opSubmit.name, Err: errors.New("no uuid")}
	}
	return uuid, nil
}

// Get returns the statuses of the statements (getDds). A NotFoundException
// is an empty answer.
func (c *SOAPClient) Get(ctx context.Context, cr Credentials, uuids []string) ([]Status, error) {
	if len(uuids) == 0 {
		return nil, nil
	}
	if err := checkUUIDs(uuids); err != nil {
		return nil, err
	}
	return c.overview(ctx, cr, opGet, getDdsRequest{UUIDs: uuids})
}

// FindByInternalReference returns the statements filed under an internal
// reference (getDdsByInternalReference): how to find out whether a
// submission whose answer was lost went through. The information system
// matches in its own way (V1 and V2 matched parts of the reference,
// ignoring case), so compare InternalReference of what comes back. Not part
// of Client; Simulator has it too.
func (c *SOAPClient) FindByInternalReference(ctx context.Context, cr Credentials, ref string) ([]Status, error) {
	if ref == "" || len([]rune(ref)) > MaxInternalReferenceLen {
		return nil, fmt.Errorf("find statements by internal reference %q: 1 to %d characters", ref, MaxInternalReferenceLen)
	}
	return c.overview(ctx, cr, opGetByInternal, getDdsByInternalReferenceRequest{InternalReference: ref})
}

func (c *SOAPClient) overview(ctx context.Context, cr Credentials, op operation, req any) ([]Status, error) {
	var out struct {
		List []xmlOverview `xml:"ddsOverviewList"`
	}
	if err := c.call(ctx, cr, op, req, &out); err != nil {
		var f *Fault
		if errors.As(err, &f) && f.Kind == FaultNotFound {
			return nil, nil
		}
		return nil, err
	}
	statuses := make([]Status, len(out.List))
	for i, o := range out.List {
		statuses[i] = o.status()
	}
	return statuses, nil
}

// Withdraw withdraws a statement (withdrawDds).
func (c *SOAPClient) Withdraw(ctx context.Context, cr Credentials, uuid string) error {
	if !IsUUID(uuid) {
		return fmt.Errorf("withdraw statement %q: not a uuid", uuid)
	}
	var out struct {
		UUID   string `xml:"uuid"`
		Status string `xml:"status"`
	}
	return c.call(ctx, cr, opWithdraw, withdrawDdsRequest{UUID: uuid}, &out)
}

// VerifyDeclaration checks a reference (verifyDeclaration). Numbers that
// cannot be valid are a Violations error; nothing is sent.
func (c *SOAPClient) VerifyDeclaration(ctx context.Context, cr Credentials, ref Reference) (string, error) {
	var vs Violations
	checkReferences(&vs, Statement{ReferencedStatements: []Reference{ref}})
	if err := vs.Err(); err != nil {
		return "", err
	}
	var out struct {
		Result string `xml:"result"`
		Status string `xml:"status"`
	}
	req := verifyDeclarationRequest{ReferenceNumber: ref.ReferenceNumber, VerificationNumber: ref.VerificationNumber}
	if err := c.call(ctx, cr, opVerify, req, &out); err != nil {
		return "", err
	}
	result := strings.TrimSpace(out.Result)
	if result == "" {
		return "", &ProtocolError{Operation: opVerify.name, Err: errors.New("no result")}
	}
	return result, nil
}

// Echo calls testEcho and returns its status.
func (c *SOAPClient) Echo(ctx context.Context, cr Credentials, query string) (string, error) {
	var out struct {
		Status string `xml:"status"`
	}
	op := opEcho
	if c.opts.EchoPath != "" {
		op.service = strings.TrimPrefix(c.opts.EchoPath, "/")
	}
	if err := c.call(ctx, cr, op, echoRequest{Query: query}, &out); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Status), nil
}

func checkUUIDs(uuids []string) error {
	if len(uuids) > MaxUUIDsPerGet {
		return fmt.Errorf("get %d statements: at most %d per call", len(uuids), MaxUUIDsPerGet)
	}
	for _, u := range uuids {
		if !IsUUID(u) {
			return fmt.Errorf("get statement %q: not a uuid", u)
		}
	}
	return nil
}

// call sends one request and decodes the answer's body element into out.
func (c *SOAPClient) call(ctx context.Context, cr Credentials, op operation, content, out any) error {
	if err := cr.Validate(); err != nil {
		return fmt.Errorf("eu information system %s: %w", op.name, err)
	}
	if err := c.limiter.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("eu information system %s: %w", op.name, ctx.Err())
		}
		return fmt.Errorf("eu information system %s: %v: %w", op.name, err, context.DeadlineExceeded)
	}
	payload, err := c.envelope(cr, op, content)
	if err != nil {
		return fmt.Errorf("eu information system %s: build request: %w", op.name, err)
	}
	url := strings.TrimRight(cr.Endpoint, "/") + "/" + op.service
	x := Exchange{Operation: op.name, URL: url, Request: payload}
	start := time.Now()
	err = c.post(ctx, op, url, payload, &x, out)
	x.Duration, x.Err = time.Since(start), err
	if c.opts.OnExchange != nil {
		c.opts.OnExchange(x)
	}
	return err
}

func (c *SOAPClient) post(ctx context.Context, op operation, url string, payload []byte, x *Exchange, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("eu information system %s: %w", op.name, err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"`+op.action+`"`)
	resp, err := c.hc.Do(req)
	if errors.Is(err, netguard.ErrTargetNotAllowed) {
		return fmt.Errorf("eu information system %s: nothing sent: the endpoint's address is loopback, link-local, multicast or unspecified, which the client does not connect to: %w", op.name, err)
	}
	if err != nil {
		return fmt.Errorf("eu information system %s: %w", op.name, err)
	}
	defer resp.Body.Close()
	x.StatusCode = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxResponseBytes+1))
	x.Response = body
	if err != nil {
		return fmt.Errorf("eu information system %s: read answer: %w", op.name, err)
	}
	if int64(len(body)) > c.opts.MaxResponseBytes {
		return &ProtocolError{Operation: op.name, Err: fmt.Errorf("answer over %d bytes", c.opts.MaxResponseBytes)}
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return &HTTPError{Operation: op.name, StatusCode: resp.StatusCode, Location: capLocation(resp.Header.Get("Location")), Body: snippet(body)}
	}
	return decodeAnswer(op, resp, body, out)
}

// envelope builds the request: WS-Security header with a fresh nonce, the
// client ID, and the body.
func (c *SOAPClient) envelope(cr Credentials, op operation, content any) ([]byte, error) {
	random := make([]byte, 16+8+8)
	if _, err := io.ReadFull(c.opts.Rand, random); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	nonce := random[:16]
	now := c.opts.Now().UTC()
	created := now.Format(wsuTime)
	env := envelope{
		Attrs: []xml.Attr{
			{Name: xml.Name{Local: "xmlns:soapenv"}, Value: NSSOAP},
			{Name: xml.Name{Local: "xmlns:v4"}, Value: NSBase},
			{Name: xml.Name{Local: "xmlns:" + op.prefix}, Value: op.ns},
		},
		Header: soapHeader{
			Security: security{
				NSWSSE: NSWSSE,
				NSWSU:  NSWSU,
				Timestamp: timestamp{
					ID:      "TS-" + hex.EncodeToString(random[16:24]),
					Created: created,
					Expires: now.Add(c.opts.TimestampTTL).Format(wsuTime),
				},
				UsernameToken: usernameToken{
					ID:       "UT-" + hex.EncodeToString(random[24:32]),
					Username: cr.Username,
					Password: typedText{Type: typeTokenDigest, Value: passwordDigest(nonce, created, cr.AuthKey)},
					Nonce:    encText{EncodingType: typeBase64, Value: base64.StdEncoding.EncodeToString(nonce)},
					Created:  created,
				},
			},
			ClientID: cr.ClientID,
		},
		Body: soapBody{Content: content},
	}
	if op.prefix == "dds" || op.prefix == "sd" {
		env.Attrs = append(env.Attrs, xml.Attr{Name: xml.Name{Local: "xmlns:eudrCommon"}, Value: NSCommon})
		// The statement and simplified-declaration services' WSDLs declare
		// the header on each of their operations; the verification and echo
		// services' do not.
		if cr.OperatorAccessIdentifier != "" {
			env.Header.BodyIdentity = &bodyIdentity{NS: NSBody, OperatorAccessID: cr.OperatorAccessIdentifier}
		}
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	if err := xml.NewEncoder(&b).Encode(env); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// wsuTime is the form of the wsu:Created and wsu:Expires times: UTC with
// milliseconds.
const wsuTime = "2006-01-02T15:04:05.000Z"

// --- answers ---

// xmlOverview is OverviewType.
type xmlOverview struct {
	UUID                    string `xml:"uuid"`
	InternalReferenceNumber string `xml:"internalReferenceNumber"`
	ReferenceNumber         string `xml:"referenceNumber"`
	VerificationNumber      string `xml:"verificationNumber"`
	Status                  string `xml:"status"`
	RejectionReason         string `xml:"rejectionReason"`
	Communication           *struct {
		Content string `xml:"content"`
	} `xml:"communicationToOperator"`
	Date string `xml:"date"`
}

func (o xmlOverview) status() Status {
	st := Status{
		UUID:               strings.TrimSpace(o.UUID),
		InternalReference:  strings.TrimSpace(o.InternalReferenceNumber),
		Status:             strings.TrimSpace(o.Status),
		ReferenceNumber:    strings.TrimSpace(o.ReferenceNumber),
		VerificationNumber: strings.TrimSpace(o.VerificationNumber),
		Date:               parseDateTime(o.Date),
	}
	if r := strings.TrimSpace(o.RejectionReason); r != "" {
		st.Reasons = []string{r}
	}
	if o.Communication != nil {
		st.Communication = strings.TrimSpace(o.Communication.Content)
	}
	return st
}

// parseDateTime reads an xs:dateTime, with or without a zone (none: UTC);
// the zero time when it cannot.
func parseDateTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

type xmlFault struct {
	Code   string `xml:"faultcode"`
	String string `xml:"faultstring"`
	Detail struct {
		Items []xmlFaultDetail `xml:",any"`
	} `xml:"detail"`
}

type xmlFaultDetail struct {
	XMLName xml.Name
	Errors  []struct {
		ID      string `xml:"ID"`
		Message string `xml:"Message"`
		Field   string `xml:"Field"`
	} `xml:"Error"`
	ErrorMessage string `xml:"errorMessage"` // EudrEchoServiceFault
	Message      string `xml:"message"`      // JAX-WS exceptions
}

// decodeAnswer reads the body element of an answer into out, or the fault
// it holds. Names are matched without their namespaces, and elements out
// does not know are skipped, so that additions of later releases do not
// break the client.
func decodeAnswer(op operation, resp *http.Response, body []byte, out any) error {
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	httpError := func() error {
		return &HTTPError{Operation: op.name, StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After")), Body: snippet(body)}
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	start, err := bodyElement(d)
	if err != nil {
		if !ok {
			return httpError()
		}
		return &ProtocolError{Operation: op.name, Err: err}
	}
	if start.Name.Local == "Fault" {
		var xf xmlFault
		if err := d.DecodeElement(&xf, &start); err != nil {
			if !ok {
				return httpError()
			}
			return &ProtocolError{Operation: op.name, Err: fmt.Errorf("fault: %w", err)}
		}
		return xf.fault(op.name, resp.StatusCode)
	}
	if !ok {
		return httpError()
	}
	if start.Name.Local != op.response {
		return &ProtocolError{Operation: op.name, Err: fmt.Errorf("answer %s, want %s", start.Name.Local, op.response)}
	}
	if err := d.DecodeElement(out, &start); err != nil {
		return &ProtocolError{Operation: op.name, Err: err}
	}
	return nil
}

// bodyElement advances d to the first element in the SOAP Body.
func bodyElement(d *xml.Decoder) (xml.StartElement, error) {
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				return xml.StartElement{}, errors.New("no soap body element")
			}
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if inBody {
				return t, nil
			}
			if t.Name.Local == "Body" && t.Name.Space == NSSOAP {
				inBody = true
			}
		case xml.EndElement:
			if inBody {
				return xml.StartElement{}, errors.New("empty soap body")
			}
		}
	}
}

func (xf xmlFault) fault(op string, status int) *Fault {
	f := &Fault{Operation: op, Code: localName(xf.Code), Message: strings.TrimSpace(xf.String), HTTPStatus: status}
	for _, d := range xf.Detail.Items {
		if f.Detail == "" {
			f.Detail = d.XMLName.Local
		}
		for _, e := range d.Errors {
			fe := FaultError{ID: strings.TrimSpace(e.ID), Message: strings.TrimSpace(e.Message), Field: strings.TrimSpace(e.Field)}
			f.Errors = append(f.Errors, fe)
			if fe.ID != "" {
				f.Reasons = append(f.Reasons, fe.ID)
			}
		}
		for _, m := range []string{d.ErrorMessage, d.Message} {
			if m = strings.TrimSpace(m); m != "" {
				f.Errors = append(f.Errors, FaultError{Message: m})
			}
		}
	}
	f.Kind = faultKind(f)
	if f.Kind == FaultBusinessRules && len(f.Reasons) == 0 && f.Message != "" {
		f.Reasons = []string{f.Message}
	}
	return f
}

// wsseFaults are the fault codes of WS-Security (SOAP Message Security
// 1.1, section 12) and of an expired timestamp.
var wsseFaults = []string{"UnsupportedSecurityToken", "UnsupportedAlgorithm", "InvalidSecurity", "InvalidSecurityToken", "FailedAuthentication", "FailedCheck", "SecurityTokenUnavailable", "MessageExpired"}

func faultKind(f *Fault) string {
	switch f.Detail {
	case "BusinessRulesValidationException":
		return FaultBusinessRules
	case "PermissionDeniedException", "DdsPermissionDeniedException", "CertificatePermissionDeniedException":
		return FaultPermissionDenied
	case "NotFoundException", "NotFoundFault":
		return FaultNotFound
	case "UnauthenticatedException":
		return FaultAuthentication
	}
	text := f.Message
	for _, e := range f.Errors {
		text += " " + e.Message
	}
	lower := strings.ToLower(text)
	switch {
	case oneOf(f.Code, wsseFaults...), strings.Contains(text, "UnauthenticatedException"),
		strings.Contains(lower, "authentication failed"), strings.Contains(lower, "unauthenticated"):
		return FaultAuthentication
	case strings.Contains(text, "cvc-"), strings.Contains(text, "SAXParseException"), strings.Contains(text, "Unmarshalling Error"):
		return FaultInvalidRequest
	case strings.EqualFold(f.Code, "Client"):
		return FaultInvalidRequest
	}
	return FaultServer
}

func oneOf(s string, values ...string) bool { return slices.Contains(values, s) }

// localName drops the prefix of a qualified name: S:Client is Client.
func localName(qname string) string {
	qname = strings.TrimSpace(qname)
	if i := strings.LastIndexByte(qname, ':'); i >= 0 {
		return qname[i+1:]
	}
	return qname
}

// retryAfter reads a Retry-After header: seconds or an HTTP date (then 0
// if past or unreadable).
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// snippet returns the beginning of an answer for a log line.
func snippet(b []byte) string {
	const limit = 512
	if len(b) > limit {
		b = b[:limit]
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(b)), "?")
}
