package euis

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
)

// OpUpdateSD is the update of a simplified declaration, as Exchange and
// Observe name it.
const OpUpdateSD = "updateSd"

var opUpdateSD = operation{OpUpdateSD, ServiceSD, NSSD + "/updateSd", "sd", NSSD, "UpdateSdResponse"}

// ReasonSDUpdateNotAllowed is the Simulator's refusal of an update of a
// declaration that is not AVAILABLE: the WSDL's updateSd is "blocked if the
// SD is not in available status".
const ReasonSDUpdateNotAllowed = "EUDR_API_UPDATE_SD_NOT_ALLOWED_FOR_STATUS"

type updateSdRequest struct {
	XMLName      xml.Name       `xml:"sd:UpdateSdRequest"`
	SDIdentifier string         `xml:"sd:sdIdentifier"`
	Statement    xmlSDStatement `xml:"sd:statement"`
}

// UpdateSD validates d (a Violations error when it breaks a rule: nothing
// is sent) and replaces the declaration sdIdentifier names with it
// (updateSd); it returns the status answered (SdModificationResponseType).
// d's OperatorRole is not sent (the update has none) but chooses whether
// the represented operator is.
func (c *SOAPClient) UpdateSD(ctx context.Context, cr Credentials, sdIdentifier string, d SDStatement) (string, error) {
	if !IsUUID(sdIdentifier) {
		return "", fmt.Errorf("update simplified declaration %q: not a uuid", sdIdentifier)
	}
	if err := ValidateSD(d); err != nil {
		return "", err
	}
	var out struct {
		UUID   string `xml:"uuid"`
		Status string `xml:"status"`
	}
	if err := c.call(ctx, cr, opUpdateSD, updateSdRequest{SDIdentifier: sdIdentifier, Statement: sdStatementXML(d)}, &out); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Status), nil
}

// UpdateSD replaces an AVAILABLE declaration's content, checked as
// SubmitSD checks it; it keeps its numbers and stays AVAILABLE. Any other
// status is refused with ReasonSDUpdateNotAllowed, an unknown declaration
// with a NotFoundException.
func (sim *Simulator) UpdateSD(ctx context.Context, _ Credentials, sdIdentifier string, d SDStatement) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if vs := checkSD(d); len(vs) > 0 {
		return "", violationFault(OpUpdateSD, vs)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	id := strings.ToLower(sdIdentifier)
	r, ok, err := sim.loadAs("sd/", id)
	if err != nil {
		return "", err
	}
	if !ok {
		f := businessFault(OpUpdateSD, ReasonStatementNotFound, "no simplified declaration "+sdIdentifier)
		f.Kind, f.Detail = FaultNotFound, "NotFoundException"
		return "", f
	}
	st, err := sim.status(r, sim.opts.Now().UTC())
	if err != nil {
		return "", err
	}
	if st.Status != StatusAvailable {
		return "", businessFault(OpUpdateSD, ReasonSDUpdateNotAllowed, fmt.Sprintf("simplified declaration %s is %s; only an AVAILABLE one can be updated", sdIdentifier, st.Status))
	}
	if d.InternalReference != r.InternalReference {
		if err := sim.indexAs("sdiref/", d.InternalReference, id); err != nil {
			return "", err
		}
		r.InternalReference = d.InternalReference
		if err := sim.putAs("sd/", r); err != nil {
			return "", err
		}
	}
	return StatusAvailable, sim.putSDStatement(id, d)
}

// putSDStatement keeps a declaration's content, under "sdstmt/<uuid>",
// for GetSDByIdentifiers to answer.
func (sim *Simulator) putSDStatement(uuid string, d SDStatement) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := sim.store.Put("sdstmt/"+uuid, b); err != nil {
		return fmt.Errorf("simulator: put sdstmt/%s: %w", uuid, err)
	}
	return nil
}
