package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/storage"
)

// errPageFull stops an iteration when a page is full.
var errPageFull = errors.New("page full")

// archivedPolygon is a polygon as an archive holds it: its feature and
// its evidence with its proof.
type archivedPolygon struct {
	id                string
	feature, evidence []byte
}

// archivePolygons writes polygons.geojson, a FeatureCollection written
// feature by feature, and evidence.jsonl, their evidence in the same order.
// It returns how many polygons it wrote.
func (s *Service) archivePolygons(ctx context.Context, snap *snapshot, z *archive) (int, error) {
	ev, err := s.newSpool(snap)
	if err != nil {
		return 0, err
	}
	defer ev.close()
	n := 0
	err = z.add(PathPolygons, func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"type":"FeatureCollection","features":[`); err != nil {
			return err
		}
		for after := ""; ; {
			page, more, err := s.polygonPage(ctx, snap, after)
			if err != nil {
				return err
			}
			for _, p := range page {
				sep := ",\n"
				if n == 0 {
					sep = "\n"
				}
				if _, err := io.WriteString(w, sep); err != nil {
					return err
				}
				if _, err := w.Write(p.feature); err != nil {
					return err
				}
				if err := ev.line(p.evidence); err != nil {
					return err
				}
				n++
			}
			if !more {
				break
			}
			after = page[len(page)-1].id
		}
		_, err := io.WriteString(w, "\n]}\n")
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, z.add(PathEvidence, ev.copyTo)
}

// polygonPage reads the next page of the snapshot's polygons after the one
// with ID after, and whether more follow.
func (s *Service) polygonPage(ctx context.Context, snap *snapshot, after string) ([]archivedPolygon, bool, error) {
	var page []archivedPolygon
	more := false
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		size := 0
		err := tx.EachPolygon(snap.t, snap.from, snap.end, after, func(p *storage.Polygon) error {
			if !snap.covers(p.LedgerIndex) {
				return nil // anchored after the snapshot's checkpoint
			}
			if len(page) == s.o.PageItems || size >= archivePageBytes {
				more = true
				return errPageFull
			}
			d, err := tx.FindPolygonDetail(snap.t, p.ID)
			if err != nil {
				return fmt.Errorf("polygon %s: %w", p.ID, err)
			}
			feature, err := archiveFeature(d.Feature, p)
			if err != nil {
				return err
			}
			evidence, err := anchor.WithProofAt(tx, snap.t, d.Evidence, p.LedgerIndex, snap.cp)
			if err != nil {
				return fmt.Errorf("evidence of polygon %s: %w", p.ID, err)
			}
			page = append(page, archivedPolygon{id: p.ID, feature: feature, evidence: evidence})
			size += len(feature) + len(evidence)
			return nil
		})
		if errors.Is(err, errPageFull) {
			return nil
		}
		return err
	})
	return page, more, err
}

// DDSLedgerLine is a line of dds-ledger.jsonl: the ledger entries of a
// statement's history that the archive's checkpoint covers.
type DDSLedgerLine struct {
	DDSID   string           `json:"ddsId"`
	Entries []DDSLedgerEntry `json:"entries"`
}

// DDSLedgerEntry is a change of a statement's history, its ledger entry
// (data: the entry's bytes, standard base64) and its inclusion proof.
type DDSLedgerEntry struct {
	Status          string   `json:"status"`
	At              string   `json:"at"`
	Index           int64    `json:"index"`
	TransactionHash string   `json:"transactionHash"`
	Data            string   `json:"data"`
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	Proof           []string `json:"proof"`
}

// archivedDDS is a statement as an archive holds it: its record and its
// dds-ledger.jsonl line.
type archivedDDS struct {
	id             string
	record, ledger []byte
}

// archiveDDS writes dds.jsonl, the statements created in the period,
// dds-ledger.jsonl, the proofs of their changes in the same order, and
// their PDF reports (archiveStatementReports). It returns how many
// statements it wrote.
func (s *Service) archiveDDS(ctx context.Context, snap *snapshot, z *archive) (int, error) {
	proofs, err := s.newSpool(snap)
	if err != nil {
		return 0, err
	}
	defer proofs.close()
	ids, err := s.newSpool(snap)
	if err != nil {
		return 0, err
	}
	defer ids.close()
	n := 0
	err = z.add(PathDDS, func(w io.Writer) error {
		for after := ""; ; {
			page, more, err := s.ddsPage(ctx, snap, after)
			if err != nil {
				return err
			}
			for _, d := range page {
				if _, err := w.Write(append(d.record, '\n')); err != nil {
					return err
				}
				if err := proofs.line(d.ledger); err != nil {
					return err
				}
				if err := ids.line([]byte(d.id)); err != nil {
					return err
				}
				n++
			}
			if !more {
				return nil
			}
			after = page[len(page)-1].id
		}
	})
	if err != nil {
		return 0, err
	}
	if err := z.add(PathDDSLedger, proofs.copyTo); err != nil {
		return 0, err
	}
	return n, s.archiveStatementReports(ctx, snap, z, ids)
}

// ddsPage reads the next page of the snapshot's statements after the one
// with ID after, and whether more follow.
func (s *Service) ddsPage(ctx context.Context, snap *snapshot, after string) ([]archivedDDS, bool, error) {
	var page []archivedDDS
	more := false
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		size := 0
		err := tx.EachDDS(snap.t, snap.from, snap.end, after, func(d *storage.DDS) error {
			if len(page) == s.o.PageItems || size >= archivePageBytes {
				more = true
				return errPageFull
			}
			view, err := s.o.DDSView(tx, snap.t, d)
			if err != nil {
				return err
			}
			record, err := storage.MarshalJSON(view)
			if err != nil {
				return fmt.Errorf("encode dds %s: %w", d.ID, err)
			}
			line := DDSLedgerLine{DDSID: d.ID, Entries: []DDSLedgerEntry{}}
			for _, c := range d.History {
				if c.LedgerIndex == nil || !snap.covers(c.LedgerIndex) {
					continue
				}
				e, err := proveEntry(tx, snap, *c.LedgerIndex)
				if err != nil {
					return fmt.Errorf("dds %s: %w", d.ID, err)
				}
				e.Status, e.At = c.Status, storage.FormatTime(c.At)
				line.Entries = append(line.Entries, e)
			}
			proof, err := storage.MarshalJSON(line)
			if err != nil {
				return err
			}
			page = append(page, archivedDDS{id: d.ID, record: record, ledger: proof})
			size += len(record) + len(proof)
			return nil
		})
		if errors.Is(err, errPageFull) {
			return nil
		}
		return err
	})
	return page, more, err
}

// proveEntry reads entry index of the tenant's log and proves it in the
// snapshot's checkpoint.
func proveEntry(tx *storage.Tx, snap *snapshot, index int64) (DDSLedgerEntry, error) {
	p, err := anchor.ProveEntryAt(tx, snap.t, *snap.cp, index)
	if err != nil {
		return DDSLedgerEntry{}, err
	}
	return DDSLedgerEntry{Index: p.Index, TransactionHash: p.TransactionHash, Data: p.Data,
		TreeSize: p.TreeSize, RootHash: p.RootHash, Proof: p.Proof}, nil
}

// archiveFeature is a stored feature (as sent, whitespace removed) with the
// polygon's ID, status and failure reason as the first members of its
// properties, replacing any members of those names sent with it. Every
// other member is kept byte for byte, the geometry included.
func archiveFeature(feature []byte, p *storage.Polygon) ([]byte, error) {
	added, err := storage.MarshalJSON(struct {
		PolygonID     string  `json:"polygonId"`
		EUDRStatus    string  `json:"eudrStatus"`
		FailureReason *string `json:"failureReason"`
	}{p.ID, p.Status, storage.Optional(p.FailureReason)})
	if err != nil {
		return nil, err
	}
	members, err := objectMembers(feature)
	if err != nil {
		return nil, fmt.Errorf("stored feature of polygon %s: %w", p.ID, err)
	}
	out := make([]byte, 0, len(feature)+len(added)+16)
	out = append(out, '{')
	hasProps := false
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(out, m.key...), ':')
		if m.name != "properties" {
			out = append(out, m.value...)
			continue
		}
		hasProps = true
		props, err := objectMembers(m.value)
		if err != nil { // null: only the added members
			out = append(out, added...)
			continue
		}
		out = append(out, added[:len(added)-1]...)
		for _, pm := range props {
			switch pm.name {
			case "polygonId", "eudrStatus", "failureReason":
				continue
			}
			out = append(append(append(append(out, ','), pm.key...), ':'), pm.value...)
		}
		out = append(out, '}')
	}
	if !hasProps {
		if len(members) > 0 {
			out = append(out, ',')
		}
		out = append(append(out, `"properties":`...), added...)
	}
	return append(out, '}'), nil
}

// member is one member of a JSON object: its key as written (quoted) and
// decoded, and its value as written.
type member struct {
	key   []byte
	name  string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members, in order, keeping
// their bytes. It fails for anything but an object.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		key := bytes.TrimLeft(data[start:dec.InputOffset()], ", \t\r\n")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, name: name, value: v})
	}
	return out, nil
}
