package storage

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketShipmentLinks = []byte("shipment_links")
	bucketShipments     = []byte("shipments")   // shipment ID -> link ID
	bucketBatchLinks    = []byte("batch_links") // batch ID -> link ID
)

// Shipment link statuses.
const (
	LinkPending = "PENDING" // accepted, waiting to be anchored in the ledger
	LinkLinked  = "LINKED"  // anchored under a signed checkpoint
	LinkFailed  = "FAILED"  // not anchored in time; the batch and shipment are free again
)

// ShipmentLink locks a batch to a logistics shipment. While it is PENDING
// or LINKED it holds both (Holds): no other link may take the batch or
// the shipment.
type ShipmentLink struct {
	ID               string     `json:"id"` // lnk_ + ULID
	JobID            string     `json:"jobId"`
	BatchID          string     `json:"batchId"`
	ShipmentID       string     `json:"shipmentId"`
	BillOfLading     string     `json:"billOfLading,omitempty"`
	ContainerNumbers []string   `json:"containerNumbers,omitempty"`
	PortOfEntry      string     `json:"portOfEntry,omitempty"`
	ETA              string     `json:"eta,omitempty"`
	Status           string     `json:"status"`
	LedgerIndex      *int64     `json:"ledgerIndex,omitempty"`
	TransactionHash  string     `json:"transactionHash,omitempty"`
	TreeSize         int64      `json:"treeSize,omitempty"`
	RootHash         string     `json:"rootHash,omitempty"`
	CreatedAt        time.Time  `json:"createdAt"`
	LinkedAt         *time.Time `json:"linkedAt,omitempty"`
}

// Holds reports whether the link holds its batch and shipment.
func (l *ShipmentLink) Holds() bool { return l.Status == LinkPending || l.Status == LinkLinked }

func (tx *Tx) linkBuckets(t Tenant) (links, shipments, batches *bolt.Bucket, err error) {
	if links, err = tx.tenantBucket(t, bucketShipmentLinks); err != nil {
		return
	}
	if shipments, err = tx.tenantBucket(t, bucketShipments); err != nil {
		return
	}
	batches, err = tx.tenantBucket(t, bucketBatchLinks)
	return
}

// PutShipmentLink writes a link; it becomes the latest link of its batch
// and of its shipment.
func (tx *Tx) PutShipmentLink(t Tenant, l *ShipmentLink) error {
	links, shipments, batches, err := tx.linkBuckets(t)
	if err != nil {
		return err
	}
	if err := shipments.Put([]byte(l.ShipmentID), []byte(l.ID)); err != nil {
		return err
	}
	if err := batches.Put([]byte(l.BatchID), []byte(l.ID)); err != nil {
		return err
	}
	return putJSON(links, []byte(l.ID), l)
}

// FindShipmentLink returns the tenant's link or ErrNotFound.
func (tx *Tx) FindShipmentLink(t Tenant, id string) (*ShipmentLink, error) {
	links, err := tx.tenantBucket(t, bucketShipmentLinks)
	if err != nil {
		return nil, err
	}
	var l ShipmentLink
	if err := getJSON(links, []byte(id), &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// latestLink returns the latest link under key in the index bucket name,
// or ErrNotFound.
func (tx *Tx) latestLink(t Tenant, name []byte, key string) (*ShipmentLink, error) {
	b, err := tx.tenantBucket(t, name)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, ErrNotFound
	}
	id := b.Get([]byte(key))
	if id == nil {
		return nil, ErrNotFound
	}
	return tx.FindShipmentLink(t, string(id))
}

// ShipmentLinkOf returns the latest link of the shipment, or ErrNotFound.
func (tx *Tx) ShipmentLinkOf(t Tenant, shipmentID string) (*ShipmentLink, error) {
	return tx.latestLink(t, bucketShipments, shipmentID)
}

// BatchLinkOf returns the latest link of the batch, or ErrNotFound.
func (tx *Tx) BatchLinkOf(t Tenant, batchID string) (*ShipmentLink, error) {
	return tx.latestLink(t, bucketBatchLinks, batchID)
}

// FindShipments returns the latest link of each of the tenant's shipments,
// the newest link first, one page (After is a link ID), and whether more
// follow. With batchID not "", only the shipments of that batch.
func (tx *Tx) FindShipments(t Tenant, batchID string, p Page) ([]*ShipmentLink, bool, error) {
	links, shipments, _, err := tx.linkBuckets(t)
	if err != nil || links == nil || shipments == nil {
		return nil, false, err
	}
	var out []*ShipmentLink
	c := links.Cursor()
	for k, v := lastBefore(c, []byte(p.After)); k != nil; k, v = c.Prev() {
		var l ShipmentLink
		if err := unmarshal(v, &l); err != nil {
			return nil, false, fmt.Errorf("read shipment link %s: %w", k, err)
		}
		// A shipment whose link failed may have been linked again: only
		// its latest link stands for it.
		if (batchID != "" && l.BatchID != batchID) || string(shipments.Get([]byte(l.ShipmentID))) != l.ID {
			continue
		}
		if len(out) == p.Limit {
			return out, true, nil
		}
		out = append(out, &l)
	}
	return out, false, nil
}
