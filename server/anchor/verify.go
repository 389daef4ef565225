package anchor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/storage"
)

// Verify checks every log in the store offline (eudr ledger verify):
// the chain, the tree and every checkpoint's signature and root, against
// verifierKey ("" for the one the store records). Each checkpoint in
// trusted, kept outside the appliance, must also still match its log. It
// prints one line per log and per trusted checkpoint to w and returns the
// first problem, naming the log and the bad entry or checkpoint.
func Verify(tx *storage.Tx, verifierKey string, trusted map[string][]byte, w io.Writer) error {
	if verifierKey == "" {
		var err error
		if verifierKey, err = ledger.VerifierKey(tx.Tx); errors.Is(err, ledger.ErrNotFound) {
			return errors.New("the store has no ledger: is this the appliance's data dir?")
		} else if err != nil {
			return err
		}
	}
	name, _, _ := strings.Cut(verifierKey, "+")
	logs, err := ledger.Logs(tx.Tx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "verifier key %s\n", verifierKey)
	for _, log := range logs {
		entries, cps, err := ledger.Verify(tx.Tx, log, name+"/"+log, verifierKey)
		if err != nil {
			fmt.Fprintf(w, "%s: BAD after %d good entries: %v\n", log, entries, err)
			return err
		}
		fmt.Fprintf(w, "%s: ok, %d entries, %d checkpoints\n", log, entries, cps)
	}
	for _, file := range slices.Sorted(maps.Keys(trusted)) {
		note, err := CheckpointNote(trusted[file])
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", file, err)
		}
		cp, err := ledger.OpenCheckpoint(note, verifierKey)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", file, err)
		}
		log, ok := strings.CutPrefix(cp.Origin, name+"/")
		if !ok || !slices.Contains(logs, log) {
			return fmt.Errorf("checkpoint %s: no log of origin %s in the store", file, cp.Origin)
		}
		if err := ledger.CheckConsistent(tx.Tx, log, cp); err != nil {
			fmt.Fprintf(w, "%s: BAD against checkpoint %s: %v\n", log, file, err)
			return fmt.Errorf("log %s against checkpoint %s: %w", log, file, err)
		}
		fmt.Fprintf(w, "%s: consistent with checkpoint %s (%d entries)\n", log, file, cp.Size)
	}
	return nil
}

// CheckpointNote finds the signed checkpoint note in what a user kept:
// the bare note (with or without its final newline, or with blank lines
// after it), the JSON of GET /ledger/checkpoint or an archive report's
// ledger/checkpoint.json ({"note": ...}), or an evidence document served
// with its proof ({"ledger": {"checkpoint": ...}}). It returns the note
// ending in one newline, as it was signed, or an error for JSON that
// holds none of these.
func CheckpointNote(b []byte) ([]byte, error) {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		var doc struct {
			Note   *string `json:"note"`
			Ledger *struct {
				Checkpoint string `json:"checkpoint"`
			} `json:"ledger"`
		}
		if err := json.Unmarshal(t, &doc); err != nil {
			return nil, fmt.Errorf("neither a checkpoint note nor JSON holding one: %w", err)
		}
		switch {
		case doc.Note != nil:
			t = []byte(*doc.Note)
		case doc.Ledger != nil && doc.Ledger.Checkpoint != "":
			t = []byte(doc.Ledger.Checkpoint)
		default:
			return nil, errors.New(`JSON without a checkpoint: no "note" (GET /ledger/checkpoint, an archive's ledger/checkpoint.json) and no "ledger"."checkpoint" (an evidence document)`)
		}
		t = bytes.TrimSpace(t)
	}
	return append(bytes.Clone(t), '\n'), nil
}
