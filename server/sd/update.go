package sd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// An update replaces a VALIDATED declaration's content in the EU system
// (updateSd), which keeps its sdIdentifier and numbers and profiles its
// risk again: the WSDL allows it only while the declaration is AVAILABLE
// there and not under a customs lock. Update checks the new declaration
// as a creation is checked and makes the call outside any transaction;
// RecordUpdate records it in the caller's: the new statement, a history
// entry (the status unchanged) naming the fields changed and the new
// statement's SHA-256, anchored by an sd.status ledger entry that carries
// that hash.

// DetailNotUpdatable is the 409 detail of a declaration that cannot be
// updated.
const DetailNotUpdatable = "SD_NOT_UPDATABLE"

// Update is a declaration updated in the EU system, for RecordUpdate to
// record. Only Update makes one.
type Update struct {
	sdID string
	// base is the SHA-256 of the stored statement the update was made
	// from: RecordUpdate refuses it when that changed meanwhile.
	base              [sha256.Size]byte
	payload           []byte
	internalReference string
	changes           []string
	euStatus          string
}

// Update replaces the content of the declaration ref names with req (which
// passed Validate) in the EU system and writes nothing. req's operatorRole
// must be the declaration's; an internalReference left out keeps the
// declaration's. It fails with a 400 for a role that differs or a
// declaration that reads so already; apierr.NotFound; 409
// SD_NOT_UPDATABLE for a declaration that is not VALIDATED or that the EU
// system refuses to update (customs lock, under checks); 422
// EU_SYSTEM_RULE for each rule the EU system finds broken; 422
// EU_SYSTEM_NOT_CONFIGURED as for a withdrawal; 503 when the EU system
// cannot be reached.
func (s *Service) Update(ctx context.Context, t storage.Tenant, ref string, req *Request) (*Update, error) {
	var d *storage.SD
	var creds euis.Credentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindSD(t, ref); err != nil {
			return err
		}
		if d.Status != storage.SDValidated {
			return apierr.Conflict(DetailNotUpdatable, "path.sdId",
				fmt.Sprintf("simplified declaration %s is %s; only a VALIDATED one can be updated", d.ID, d.Status))
		}
		creds, err = s.o.Credentials(tx, t)
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "simplified declaration", ref)
	}
	if req.OperatorRole != d.OperatorRole {
		return nil, apierr.Invalid("operatorRole", fmt.Sprintf("must stay %s: a declaration's role cannot change; withdraw it and file a new one", d.OperatorRole))
	}
	if req.InternalReference == "" {
		req.InternalReference = d.InternalReference
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(payload, d.Statement) {
		return nil, apierr.Invalid("body", "changes nothing: the declaration reads so already")
	}
	// A retry of an update the EU system took but that was never recorded
	// here (a crash, a failed commit) may be refused there: when the EU
	// system's declaration reads as this update makes it, it is done.
	client := s.o.Clients[t.Env]
	st := req.statement()
	status, uerr := client.UpdateSD(ctx, creds, d.SDIdentifier, st)
	var fault *euis.Fault
	if uerr != nil && errors.As(uerr, &fault) && !euis.IsTransient(uerr) && d.ReferenceNumber != "" {
		eu, gerr := client.GetSDByIdentifiers(ctx, creds, euis.Reference{ReferenceNumber: d.ReferenceNumber, VerificationNumber: d.VerificationNumber})
		if gerr == nil && sameContent(eu, st) {
			status, uerr = "", nil // found so on a retry
		}
	}
	if uerr != nil {
		return nil, updateFailed(uerr)
	}
	return &Update{sdID: d.ID, base: sha256.Sum256(d.Statement), payload: payload, internalReference: req.InternalReference, changes: changedFields(d.Statement, payload),
		euStatus: status}, nil
}

// update is how euchange.Failed words a failed update: the EU system's
// field names are mapped to the request's.
var update = euchange.Change{Noun: "updated declaration", Verb: "update", What: "update",
	NotChangeable: DetailNotUpdatable, Target: "path.sdId", Field: requestPath}

// requestPath is the request's path of a field the EU system names: its
// names where the request's differ, a violation's path as it is.
func requestPath(f string) string {
	return strings.NewReplacer("internalReferenceNumber", "internalReference", "geometryGeojson", "geometryGeoJSON").Replace(f)
}

// updateFailed is the error of an update the EU system did not take
// (euchange.Failed).
func updateFailed(err error) error { return euchange.Failed(update, err) }

// RecordUpdate records u by actor in the caller's transaction and returns
// the declaration with its statement. When the EU system did not answer
// AVAILABLE (it profiles the declaration again: UPDATED), or the update
// was found on a retry, the declaration is recorded SUBMITTED and an
// sd_submission job is queued in the same transaction to follow it to
// the EU system's decision. When the stored statement changed
// since Update read it (another update, with another Idempotency-Key,
// recorded meanwhile), it records nothing and fails with 409
// SD_NOT_UPDATABLE: the EU system holds the content of whichever call it
// took last, which the caller reads back before updating again.
func (s *Service) RecordUpdate(tx *storage.Tx, t storage.Tenant, u *Update, actor string) (View, error) {
	d, err := tx.FindSD(t, u.sdID)
	if err != nil {
		return View{}, apierr.Named(err, "simplified declaration", u.sdID)
	}
	if sha256.Sum256(d.Statement) != u.base {
		return View{}, apierr.Conflict(DetailNotUpdatable, "path.sdId", fmt.Sprintf(
			"simplified declaration %s was changed by another request since; read it again (the EU system holds the content it took last) and update it anew", d.ID))
	}
	d.Statement, d.InternalReference = u.payload, u.internalReference
	if d.Poll != nil && u.euStatus != "" {
		d.Poll.EUStatus = u.euStatus
	}
	euStatus := u.euStatus
	if euStatus == "" {
		euStatus = "found so on a retry"
	}
	sum := sha256.Sum256(d.Statement)
	note := fmt.Sprintf("updated in the EU system (%s): %s; statement sha256 %s", euStatus, strings.Join(u.changes, ", "), hex.EncodeToString(sum[:]))
	status := d.Status
	if d.Status == storage.SDValidated && u.euStatus != euis.StatusAvailable {
		// The EU system profiles the declaration again (UPDATED), or its
		// status is not known (an update found on a retry): it is
		// SUBMITTED again, and a submission job follows it until the EU
		// system decides, as after a filing.
		job, err := s.o.Jobs.Enqueue(tx, t, work.SDSubmission, 1, []byte(d.ID))
		if err != nil {
			return View{}, err
		}
		var attempted *time.Time
		if d.Poll != nil {
			attempted = d.Poll.SubmitAttemptAt
		}
		d.Poll = &storage.DDSPollState{JobID: job.ID, SubmitAttemptAt: attempted, EUStatus: u.euStatus}
		status = storage.SDSubmitted
		note += "; being decided again by the EU system: followed by job " + job.ID
	}
	if err := s.record(tx, t, d, status, actor, note); err != nil {
		return View{}, err
	}
	dcl, err := withSubmission(tx, t, d)
	return ViewOf(dcl, true), err
}

// sameContent reports whether the EU system's declaration eu reads as
// sent: quantities compared as numbers, everything else as it is.
func sameContent(eu *euis.SDStatement, sent euis.SDStatement) bool {
	if eu == nil || len(eu.Commodities) != len(sent.Commodities) {
		return false
	}
	a, b := *eu, sent
	a.Commodities, b.Commodities = nil, nil
	if !reflect.DeepEqual(a, b) {
		return false
	}
	for i := range sent.Commodities {
		ca, cb := eu.Commodities[i], sent.Commodities[i]
		if ca.NetWeightKg.Cmp(cb.NetWeightKg) != 0 || (ca.SupplementaryUnit == nil) != (cb.SupplementaryUnit == nil) ||
			(ca.SupplementaryUnit != nil && ca.SupplementaryUnit.Cmp(*cb.SupplementaryUnit) != 0) {
			return false
		}
		ca.NetWeightKg, cb.NetWeightKg, ca.SupplementaryUnit, cb.SupplementaryUnit = "", "", nil, nil
		if !reflect.DeepEqual(ca, cb) {
			return false
		}
	}
	return true
}

// changedFields names the fields of the stored declaration was that now
// differ: top-level members by name, commodities by index.
func changedFields(was, now []byte) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(was, &a) != nil || json.Unmarshal(now, &b) != nil {
		return []string{"statement"}
	}
	var out []string
	for _, k := range []string{"internalReference", "activityType", "operator", "countryOfActivity", "borderCrossCountry", "comment", "geoLocationConfidential"} {
		if !bytes.Equal(a[k], b[k]) {
			out = append(out, k)
		}
	}
	var ca, cb []json.RawMessage
	_ = json.Unmarshal(a["commodities"], &ca)
	_ = json.Unmarshal(b["commodities"], &cb)
	for i := range max(len(ca), len(cb)) {
		if i >= len(ca) || i >= len(cb) || !bytes.Equal(ca[i], cb[i]) {
			out = append(out, fmt.Sprintf("commodities[%d]", i))
		}
	}
	return out
}
