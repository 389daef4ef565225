package server

import (
	"errors"
	"net/http"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestSharedCommitError(t *testing.T) {
	plain := errors.New("disk on fire")
	for _, tc := range []struct {
		name        string
		err         error
		wantRefused bool
	}{
		{"Refusal", apierr.NotFound{Kind: "webhook", ID: "wh_1"}, true},
		{"PlainNotFound", storage.ErrNotFound, false}, // found missing mid-write: roll back
		{"Conflict", apierr.Conflict(apierr.DetailWebhookDuplicate, "eventTypes", "dup"), true},
		{"Internal", &apierr.Error{Status: http.StatusInternalServerError, Code: apierr.CodeInternal}, false},
		{"Plain", plain, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused *apierr.Error
			got := sharedCommitError(tc.err, &refused)
			if tc.wantRefused {
				if got != nil || refused == nil || refused.Error() != apierr.From(tc.err).Error() {
					t.Errorf("got return %v and refused %v, want nil and the refusal kept", got, refused)
				}
				return
			}
			if got != tc.err || refused != nil {
				t.Errorf("got return %v and refused %v, want the error returned (it fails the commit)", got, refused)
			}
		})
	}
}
