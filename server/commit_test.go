package server

import (
	"errors"
	"net/http"
	"testing"
)

func TestSharedCommitError(t *testing.T) {
	plain := errors.New("disk on fire")
	for _, tc := range []struct {
		name        string
		err         error
		wantRefused bool
	}{
		{"Refusal", notFound("webhook wh_1"), true},
		{"Conflict", conflict(DetailWebhookDuplicate, "eventTypes", "dup"), true},
		{"Internal", &Error{Status: http.StatusInternalServerError, Code: CodeInternal}, false},
		{"Plain", plain, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused *Error
			got := sharedCommitError(tc.err, &refused)
			if tc.wantRefused {
				if got != nil || refused != tc.err {
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
