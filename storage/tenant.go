package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Environment is production or sandbox: the listener a request came in on.
type Environment string

// The two environments.
const (
	Production Environment = "production"
	Sandbox    Environment = "sandbox"
)

// Environments lists both, production first.
var Environments = []Environment{Production, Sandbox}

// Valid reports whether e is one of the two environments.
func (e Environment) Valid() bool { return e == Production || e == Sandbox }

// Tenant is the (organisation, environment) pair every resource belongs to.
type Tenant struct {
	Org string
	Env Environment
}

func (t Tenant) String() string { return t.Org + "/" + string(t.Env) }

// tenantBucket returns the resource bucket name of tenant t, creating the
// path when the transaction is writable. In a read-only transaction a missing
// bucket is returned as nil: the tenant has no such records.
func (tx *Tx) tenantBucket(t Tenant, name []byte) (*bolt.Bucket, error) {
	if t.Org == "" || !t.Env.Valid() {
		return nil, fmt.Errorf("invalid tenant %q", t)
	}
	root := tx.Bucket(bucketTenants)
	if !tx.Writable() {
		org := root.Bucket([]byte(t.Org))
		if org == nil {
			return nil, nil
		}
		env := org.Bucket([]byte(t.Env))
		if env == nil {
			return nil, nil
		}
		return env.Bucket(name), nil
	}
	org, err := root.CreateBucketIfNotExists([]byte(t.Org))
	if err != nil {
		return nil, fmt.Errorf("tenant bucket %s: %w", t, err)
	}
	env, err := org.CreateBucketIfNotExists([]byte(t.Env))
	if err != nil {
		return nil, fmt.Errorf("tenant bucket %s: %w", t, err)
	}
	b, err := env.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, fmt.Errorf("tenant bucket %s/%s: %w", t, name, err)
	}
	return b, nil
}
