package euis

// checkRepresented checks what the information system's business rules
// require of the operator an authorised representative files for
// (REPRESENTATIVE_OPERATOR), beyond the schema's constraints that
// checkOperator checks: its name, its address (street, postal code, city
// and country) and at least one reference number, the EORI or another
// ("Operator filled by an authorized representative", Operator API
// Reference V3, section 10). A simplified declaration's represented
// operator is identified by its reference numbers alone (checkSD).
func checkRepresented(vs *Violations, s Statement) {
	if s.OperatorRole != RoleRepresentativeOperator {
		return
	}
	o := s.Operator
	if o.Street == "" && o.PostalCode == "" && o.City == "" {
		// A partial address is checkOperator's to name.
		for _, f := range []struct{ path, v string }{{"operator.street", o.Street}, {"operator.postalCode", o.PostalCode},
			{"operator.city", o.City}, {"operator.country", o.Country}} {
			if f.v == "" {
				vs.add(CodeRequired, f.path, "the represented operator's address (street, postal code, city and country) is required for REPRESENTATIVE_OPERATOR", "empty")
			}
		}
	}
	if len(o.ReferenceNumbers()) == 0 {
		vs.add(CodeRequired, "operator.identifiers", "at least one reference number of the represented operator (its EORI or another identifier) is required for REPRESENTATIVE_OPERATOR", "none")
	}
}
