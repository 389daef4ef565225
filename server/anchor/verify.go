package anchor

import (
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
		cp, err := ledger.OpenCheckpoint(trusted[file], verifierKey)
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
