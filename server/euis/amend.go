package euis

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OpAmend is the amendment of a filed statement, as Observe names it.
const OpAmend = "amendDds"

// AmendExtension is how much longer than AmendWindow the information
// system's rules let an operator amend a statement on a justified request:
// 8 calendar days, counted as 8 times 24 hours from the end of the 72
// hours. The operation carries no justification: the appliance records it.
const AmendExtension = 8 * 24 * time.Hour

// Windows are the periods after a statement's submission within which it
// can be changed: withdrawn or amended within Amend, amended on a
// justified request for Extension after that. The information system's
// are EUWindows; the sandbox may shorten its own (Simulator, dds), so
// that the whole period can be tried out on the wall clock.
type Windows struct {
	Amend     time.Duration
	Extension time.Duration
}

// EUWindows are the information system's rules: AmendWindow and
// AmendExtension.
var EUWindows = Windows{Amend: AmendWindow, Extension: AmendExtension}

// Period is when the amendment period of a statement submitted at
// submitted ends without a justification (window) and with one (closes).
func (w Windows) Period(submitted time.Time) (window, closes time.Time) {
	window = submitted.Add(w.Amend)
	return window, window.Add(w.Extension)
}

var opAmend = operation{OpAmend, ServiceDDS, NSDDS + "/amendDds", "dds", NSDDS, "AmendDdsResponse"}

// amendDdsRequest is AmendDdsRequestType: the statement's UUID and the
// whole statement as it is to read from now on.
type amendDdsRequest struct {
	XMLName   xml.Name     `xml:"dds:AmendDdsRequest"`
	UUID      string       `xml:"dds:uuid"`
	Statement xmlStatement `xml:"dds:statement"`
}

// Amend validates s (a Violations error when it breaks a rule: nothing is
// sent) and replaces the statement uuid names with it (amendDds). It
// returns the status the information system answers (DdsModificationResponseType).
func (c *SOAPClient) Amend(ctx context.Context, cr Credentials, uuid string, s Statement) (string, error) {
	if !IsUUID(uuid) {
		return "", fmt.Errorf("amend statement %q: not a uuid", uuid)
	}
	if err := Validate(s); err != nil {
		return "", err
	}
	var out struct {
		UUID   string `xml:"uuid"`
		Status string `xml:"status"`
	}
	if err := c.call(ctx, cr, opAmend, amendDdsRequest{UUID: uuid, Statement: statementXML(s)}, &out); err != nil {
		return "", err
	}
	status := strings.TrimSpace(out.Status)
	if status == "" {
		return "", &ProtocolError{Operation: OpAmend, Err: errors.New("no status")}
	}
	return status, nil
}

func (o *observed) Amend(ctx context.Context, cr Credentials, uuid string, s Statement) (string, error) {
	start := time.Now()
	st, err := o.c.Amend(ctx, cr, uuid, s)
	o.observe(OpAmend, start, err)
	return st, err
}
