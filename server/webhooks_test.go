package server

import "testing"

func TestCanonicalTarget(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"https://Hooks.Example.com/x", "https://hooks.example.com/x"},
		{"https://hooks.example.com:443/x", "https://hooks.example.com/x"},
		{"https://[::1]:443/x", "https://[::1]/x"},
	} {
		if canonicalTarget(tc.a) != canonicalTarget(tc.b) {
			t.Errorf("canonicalTarget(%s) = %s, want it equal to canonicalTarget(%s) = %s", tc.a, canonicalTarget(tc.a), tc.b, canonicalTarget(tc.b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"https://hooks.example.com/X", "https://hooks.example.com/x"},
		{"https://hooks.example.com:8443/x", "https://hooks.example.com/x"},
	} {
		if canonicalTarget(tc.a) == canonicalTarget(tc.b) {
			t.Errorf("canonicalTarget(%s) == canonicalTarget(%s), want them different", tc.a, tc.b)
		}
	}
}
