package storage

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

var bucketReports = []byte("reports")

// Report statuses. A report is PENDING until its job has written the
// archive (READY) or failed (FAILED); the file of a READY report is deleted
// after the retention period (EXPIRED).
const (
	ReportPending = "PENDING"
	ReportReady   = "READY"
	ReportFailed  = "FAILED"
	ReportExpired = "EXPIRED"
)

// Report is an archive report: a zip of a tenant's records of a period,
// written to a file by its job. The record says where the job stands and,
// once READY, the SHA-256 and size of the file.
type Report struct {
	ID    string `json:"id"` // rpt_ + ULID; the file is <ID>.zip
	JobID string `json:"jobId"`
	// From is the first instant of the period and To its last (both
	// included).
	From        time.Time  `json:"from"`
	To          time.Time  `json:"to"`
	Status      string     `json:"status"`
	SHA256      string     `json:"sha256,omitempty"` // hex, of the whole zip
	SizeBytes   int64      `json:"sizeBytes,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	ExpiredAt   *time.Time `json:"expiredAt,omitempty"`
}

// PutReport writes the tenant's report record.
func (tx *Tx) PutReport(t Tenant, r *Report) error {
	b, err := tx.tenantBucket(t, bucketReports)
	if err != nil {
		return err
	}
	return putJSON(b, []byte(r.ID), r)
}

// FindReport returns the tenant's report or ErrNotFound.
func (tx *Tx) FindReport(t Tenant, id string) (*Report, error) {
	b, err := tx.tenantBucket(t, bucketReports)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := getJSON(b, []byte(id), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ExpireReports marks EXPIRED, in every tenant, the READY reports completed
// before before, and returns them with their tenants, so that the caller
// deletes their files once the transaction has committed.
func (tx *Tx) ExpireReports(before time.Time) ([]TenantReport, error) {
	var out []TenantReport
	err := tx.eachTenantBucket(bucketReports, func(t Tenant, b *bolt.Bucket) error {
		var due []*Report
		err := b.ForEach(func(k, v []byte) error {
			var r Report
			if err := unmarshal(v, &r); err != nil {
				return fmt.Errorf("read report %s: %w", k, err)
			}
			if r.Status == ReportReady && r.CompletedAt != nil && r.CompletedAt.Before(before) {
				due = append(due, &r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		now := tx.Now()
		for _, r := range due { // not inside ForEach, which must not change the bucket
			r.Status, r.ExpiredAt = ReportExpired, &now
			if err := putJSON(b, []byte(r.ID), r); err != nil {
				return err
			}
			out = append(out, TenantReport{Tenant: t, Report: r})
		}
		return nil
	})
	return out, err
}

// TenantReport is a report and the tenant it belongs to.
type TenantReport struct {
	Tenant Tenant
	Report *Report
}

// eachTenantBucket calls fn with the resource bucket name of every tenant
// that has one.
func (tx *Tx) eachTenantBucket(name []byte, fn func(Tenant, *bolt.Bucket) error) error {
	root := tx.Bucket(bucketTenants)
	if root == nil {
		return nil
	}
	return root.ForEachBucket(func(org []byte) error {
		ob := root.Bucket(org)
		return ob.ForEachBucket(func(env []byte) error {
			b := ob.Bucket(env).Bucket(name)
			if b == nil {
				return nil
			}
			return fn(Tenant{Org: string(org), Env: Environment(env)}, b)
		})
	})
}

// EachPolygon calls fn with each of the tenant's polygons screened in
// [from, to) whose ID sorts after after ("" for the first), in ID order
// (job by job, in feature order). It stops at fn's first error and returns
// it, so that a caller can read a long range page by page, each page in a
// short transaction: fn returns a sentinel when the page is full, and the
// next page starts after the last polygon it kept. Polygons are indexed by
// ID only: the whole bucket is read, but not the features or evidence.
func (tx *Tx) EachPolygon(t Tenant, from, to time.Time, after string, fn func(*Polygon) error) error {
	b, err := tx.tenantBucket(t, bucketPolygons)
	if err != nil || b == nil {
		return err
	}
	return eachAfter(b, after, func(k, v []byte) error {
		var p Polygon
		if err := unmarshal(v, &p); err != nil {
			return fmt.Errorf("read polygon %s: %w", k, err)
		}
		if p.ScreenedAt.Before(from) || !p.ScreenedAt.Before(to) {
			return nil
		}
		return fn(&p)
	})
}

// EachDDS calls fn with each of the tenant's statements created in
// [from, to), in ID order (oldest first), from the one after after ("" for
// the first), so that a long range can be read page by page as
// EachPolygon is. It stops at fn's first error.
func (tx *Tx) EachDDS(t Tenant, from, to time.Time, after string, fn func(*DDS) error) error {
	b, err := tx.tenantBucket(t, bucketDDS)
	if err != nil || b == nil {
		return err
	}
	return eachAfter(b, after, func(k, v []byte) error {
		var d DDS
		if err := unmarshal(v, &d); err != nil {
			return fmt.Errorf("read dds %s: %w", k, err)
		}
		if d.CreatedAt.Before(from) || !d.CreatedAt.Before(to) {
			return nil
		}
		return fn(&d)
	})
}

// eachAfter calls fn with each key and value of b whose key sorts after
// after (all when after is ""), in key order, skipping nested buckets.
func eachAfter(b *bolt.Bucket, after string, fn func(k, v []byte) error) error {
	c := b.Cursor()
	k, v := c.First()
	if after != "" {
		if k, v = c.Seek([]byte(after)); k != nil && bytes.Equal(k, []byte(after)) {
			k, v = c.Next()
		}
	}
	for ; k != nil; k, v = c.Next() {
		if v == nil {
			continue
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}
