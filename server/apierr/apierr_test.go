package apierr_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestFrom(t *testing.T) {
	conflict := apierr.Conflict(apierr.DetailWebhookDuplicate, "url", "taken")
	disk := errors.New("disk on fire")
	for _, tc := range []struct {
		name        string
		err         error
		wantStatus  int
		wantCode    string
		wantMessage string
		wantDetails int
	}{
		{"Error", fmt.Errorf("put: %w", conflict), 409, apierr.CodeConflict, "taken", 1},
		{"NotFound", fmt.Errorf("find: %w", apierr.NotFound{Kind: "batch", ID: "bat_1"}), 404, apierr.CodeNotFound, "batch bat_1 not found", 0},
		{"NotFoundNoID", apierr.NotFound{Kind: "EU system credentials"}, 404, apierr.CodeNotFound, "EU system credentials not found", 0},
		{"StorageNotFound", fmt.Errorf("find: %w", storage.ErrNotFound), 404, apierr.CodeNotFound, "resource not found", 0},
		{"LedgerNotFound", fmt.Errorf("entry 9: %w", ledger.ErrNotFound), 404, apierr.CodeNotFound, "entry 9: " + ledger.ErrNotFound.Error(), 0},
		{"GeoProblems", geo.Problems{{Code: geo.CodeRequired, Path: "features", Issue: "is required"},
			{Code: geo.CodeInvalidValue, Path: "type", Issue: "must be FeatureCollection"}}, 400, apierr.CodeValidationFailed, "request validation failed", 2},
		{"Internal", disk, 500, apierr.CodeInternal, "internal error", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := apierr.From(tc.err)
			if e.Status != tc.wantStatus || e.Code != tc.wantCode || e.Message != tc.wantMessage || len(e.Details) != tc.wantDetails {
				t.Errorf("From(%v): got %d %s %q with %d details, want %d %s %q with %d",
					tc.err, e.Status, e.Code, e.Message, len(e.Details), tc.wantStatus, tc.wantCode, tc.wantMessage, tc.wantDetails)
			}
		})
	}
	if e := apierr.From(disk); !errors.Is(e, disk) {
		t.Errorf("a 500 must keep its cause for the log, got %v", e.Err)
	}
}

func TestNamed(t *testing.T) {
	if err := apierr.Named(nil, "job", "j"); err != nil {
		t.Errorf("Named(nil): got %v, want nil", err)
	}
	other := errors.New("boom")
	if err := apierr.Named(other, "job", "j"); err != other {
		t.Errorf("Named(other): got %v, want it unchanged", err)
	}
	err := apierr.Named(fmt.Errorf("find: %w", storage.ErrNotFound), "job", "job_1")
	var nf apierr.NotFound
	if !errors.As(err, &nf) || nf.Kind != "job" || nf.ID != "job_1" || !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Named(ErrNotFound): got %#v, want NotFound{job, job_1} that is still a storage.ErrNotFound", err)
	}
	inner := apierr.NotFound{Kind: "batch", ID: "bat_1"}
	if err := apierr.Named(inner, "job", "job_1"); err != error(inner) {
		t.Errorf("Named keeps the innermost name: got %v, want %v", err, inner)
	}
}

func TestFromGeo_FieldMapping(t *testing.T) {
	e := apierr.FromGeo(geo.Problems{{Code: geo.CodeRequired, Path: "geometry", Issue: "is required"}},
		func(p string) string { return "features." + p })
	if len(e.Details) != 1 || e.Details[0].Field != "features.geometry" || e.Message != "is required" {
		t.Errorf("got %+v, want one detail at features.geometry whose issue is the message", e)
	}
}

func TestProblems_Err(t *testing.T) {
	var p apierr.Problems
	if p.Err() != nil {
		t.Fatal("no problems must give a nil error")
	}
	p.Add(apierr.DetailRequired, "name", "is required")
	var e *apierr.Error
	if !errors.As(p.Err(), &e) || e.Status != 400 || e.Code != apierr.CodeValidationFailed {
		t.Errorf("got %v, want a 400 VALIDATION_FAILED", p.Err())
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		max     int
		want    string
	}{
		{"Short", "name", 5, "name"},
		{"ExactlyMax", "héllo", 5, "héllo"},
		{"Cut", "abcdefgh", 5, "abcd…"},
		{"CutBetweenCharacters", "ééééééé", 4, "ééé…"},
		{"FourByteCharacters", "🌳🌳🌳🌳🌳🌳", 3, "🌳🌳…"},
		{"InvalidUTF8Kept", "ab\xffcdef", 4, "ab\xff…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := apierr.Cut(tc.s, tc.max)
			if got != tc.want {
				t.Errorf("Cut(%q, %d): got %q, want %q", tc.s, tc.max, got, tc.want)
			}
			if utf8.ValidString(tc.s) && !utf8.ValidString(got) {
				t.Errorf("Cut(%q, %d): got invalid UTF-8 %q", tc.s, tc.max, got)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	decoded := apierr.Problems{{Code: apierr.DetailUnknownField, Field: "extra", Issue: "is not a field"},
		{Code: apierr.DetailInvalidValue, Field: "name", Issue: "must be a string"}}
	validated := apierr.Validation(apierr.Detail{Code: apierr.DetailRequired, Field: "name", Issue: "is required"},
		apierr.Detail{Code: apierr.DetailRequired, Field: "kind", Issue: "is required"})
	fields := func(err error) string {
		var e *apierr.Error
		if !errors.As(err, &e) {
			return fmt.Sprint(err)
		}
		var out []string
		for _, d := range e.Details {
			out = append(out, d.Field+":"+d.Code)
		}
		return strings.Join(out, " ")
	}
	disk := errors.New("disk on fire")
	for _, tc := range []struct {
		name  string
		first apierr.Problems
		err   error
		want  string
	}{
		{"Both", decoded, validated, "extra:UNKNOWN_FIELD name:INVALID_VALUE kind:REQUIRED"},
		{"FirstOnly", decoded, nil, "extra:UNKNOWN_FIELD name:INVALID_VALUE"},
		{"ErrOnly", nil, validated, "name:REQUIRED kind:REQUIRED"},
		{"ErrNot400", decoded, disk, "extra:UNKNOWN_FIELD name:INVALID_VALUE"},
		{"Neither", nil, nil, "<nil>"},
	} {
		if got := fields(apierr.Merge(tc.first, tc.err)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
	if err := apierr.Merge(nil, disk); err != disk {
		t.Errorf("no problems of its own: got %v, want the error unchanged", err)
	}
}
