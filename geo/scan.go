package geo

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects, so hostile input
// cannot exhaust the stack. A MultiPolygon feature needs 8 levels;
// properties may nest deeper.
const maxDepth = 512

// syntaxError is malformed JSON: where the scanner stopped and why.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.offset) }

// issue words the error for a client: line, column and byte offset.
func (e *syntaxError) issue(data []byte) string {
	off := min(e.offset, len(data))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:off], '\n')+1:off])
	return fmt.Sprintf("malformed JSON at line %d, column %d (byte %d): %s", line, col, e.offset, e.msg)
}

// scanner reads JSON from a byte slice in one pass. It checks the grammar of
// RFC 8259 (strings must be UTF-8) and leaves meaning to its caller, which
// asks for the value it expects next.
type scanner struct {
	data  []byte
	pos   int
	depth int
}

func (s *scanner) errorf(format string, args ...any) error {
	return &syntaxError{offset: s.pos, msg: fmt.Sprintf(format, args...)}
}

// unexpected reports the byte at the current position where want was due.
func (s *scanner) unexpected(want string) error {
	if s.pos >= len(s.data) {
		return s.errorf("unexpected end of input, expected %s", want)
	}
	c := s.data[s.pos]
	if c < 0x20 || c >= 0x7f {
		return s.errorf("unexpected byte 0x%02x, expected %s", c, want)
	}
	return s.errorf("unexpected %q, expected %s", c, want)
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// atEnd skips white space and reports whether the input is exhausted
// (peek's 0 may also be a NUL byte).
func (s *scanner) atEnd() bool {
	s.peek()
	return s.pos >= len(s.data)
}

// end checks that nothing but white space follows the value.
func (s *scanner) end() error {
	if !s.atEnd() {
		return s.unexpected("end of input after the JSON value")
	}
	return nil
}

// open consumes the '[' or '{' at the current position and reports whether
// the container is empty (its closing byte then consumed too).
func (s *scanner) open(closing byte) (empty bool, err error) {
	if s.depth >= maxDepth {
		return false, s.errorf("nesting deeper than %d levels", maxDepth)
	}
	s.depth++
	s.pos++
	if s.peek() == closing {
		s.pos++
		s.depth--
		return true, nil
	}
	return false, nil
}

// next is called after an element or member: it consumes ',' and returns
// true for another, or consumes the closing byte and returns false.
func (s *scanner) next(closing byte) (more bool, err error) {
	switch s.peek() {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		s.depth--
		return false, nil
	}
	return false, s.unexpected(fmt.Sprintf("',' or '%c'", closing))
}

// object reads the object at the current position, calling member with each
// member name; member must consume the value (the scanner is at it).
func (s *scanner) object(member func(name []byte) error) error {
	empty, err := s.open('}')
	if err != nil || empty {
		return err
	}
	for {
		if s.peek() != '"' {
			return s.unexpected("a member name in double quotes")
		}
		name, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.unexpected("':' after a member name")
		}
		s.pos++
		if s.peek() == 0 {
			return s.unexpected("a value")
		}
		if err := member(name); err != nil {
			return err
		}
		if more, err := s.next('}'); err != nil || !more {
			return err
		}
	}
}

// array reads the array at the current position, calling elem for each
// element with its index; elem must consume the element.
func (s *scanner) array(elem func(i int) error) error {
	empty, err := s.open(']')
	if err != nil || empty {
		return err
	}
	for i := 0; ; i++ {
		if s.peek() == 0 {
			return s.unexpected("a value")
		}
		if err := elem(i); err != nil {
			return err
		}
		if more, err := s.next(']'); err != nil || !more {
			return err
		}
	}
}

// kind names the value at the current position for messages.
func (s *scanner) kind() string {
	switch c := s.peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "a value"
}

// nesting counts the '[' that open the value at the current position
// before its first number, or returns 0 when something else comes first:
// how deeply a coordinates member nests.
func (s *scanner) nesting() int {
	d := 0
	for _, c := range s.data[s.pos:] {
		switch {
		case c == '[':
			d++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '-' || c >= '0' && c <= '9':
			return d
		default:
			return 0
		}
	}
	return 0
}

// null consumes a null at the current position and reports whether it was one.
func (s *scanner) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.data[s.pos:], []byte("null")) {
		s.pos += 4
		return true
	}
	return false
}

// skip checks and consumes the value at the current position.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(func(int) error { return s.skip() })
	case c == '"':
		_, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, _, err := s.number()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.unexpected("a value")
}

func (s *scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return s.unexpected(lit)
	}
	s.pos += len(lit)
	return nil
}

// value consumes the value at the current position and returns its bytes.
func (s *scanner) value() ([]byte, error) {
	s.peek()
	start := s.pos
	if err := s.skip(); err != nil {
		return nil, err
	}
	return s.data[start:s.pos], nil
}

// str reads the string at the current position and returns its decoded
// bytes. Without escapes they alias the input.
func (s *scanner) str() ([]byte, error) {
	start := s.pos + 1
	ascii := true
	for i := start; i < len(s.data); i++ {
		switch c := s.data[i]; {
		case c == '"':
			b := s.data[start:i]
			if !ascii && !utf8.Valid(b) {
				s.pos = start + invalidUTF8At(b)
				return nil, s.errorf("invalid UTF-8 in string")
			}
			s.pos = i + 1
			return b, nil
		case c == '\\':
			return s.strEscaped(start, i)
		case c < 0x20:
			s.pos = i
			return nil, s.errorf("control character 0x%02x in string (escape it)", c)
		case c >= 0x80:
			ascii = false
		}
	}
	s.pos = len(s.data)
	return nil, s.errorf("unexpected end of input in string")
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// strEscaped decodes a string from start whose first backslash is at i.
func (s *scanner) strEscaped(start, i int) ([]byte, error) {
	out := append([]byte(nil), s.data[start:i]...)
	if !utf8.Valid(out) {
		s.pos = start + invalidUTF8At(out)
		return nil, s.errorf("invalid UTF-8 in string")
	}
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return out, nil
		case c < 0x20:
			s.pos = i
			return nil, s.errorf("control character 0x%02x in string (escape it)", c)
		case c == '\\':
			if i+1 >= len(s.data) {
				s.pos = len(s.data)
				return nil, s.errorf("unexpected end of input in string")
			}
			i++
			switch e := s.data[i]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(s.data[i+1:])
				if !ok {
					s.pos = i - 1
					return nil, s.errorf(`invalid \u escape (four hex digits expected)`)
				}
				i += 4
				if utf16IsHigh(r) {
					// A high surrogate needs a low one; otherwise it is
					// replaced, as encoding/json does.
					if i+6 < len(s.data) && s.data[i+1] == '\\' && s.data[i+2] == 'u' {
						if r2, ok := hex4(s.data[i+3:]); ok && utf16IsLow(r2) {
							r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				} else if utf16IsLow(r) {
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
			default:
				s.pos = i - 1
				return nil, s.errorf("invalid escape %q in string", "\\"+string(rune(e)))
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && n <= 1 {
				s.pos = i
				return nil, s.errorf("invalid UTF-8 in string")
			}
			out = append(out, s.data[i:i+n]...)
			i += n
		}
	}
	s.pos = len(s.data)
	return nil, s.errorf("unexpected end of input in string")
}

func utf16IsHigh(r rune) bool { return r >= 0xd800 && r < 0xdc00 }
func utf16IsLow(r rune) bool  { return r >= 0xdc00 && r < 0xe000 }

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// maxExponent bounds the exponent read from a number's text; larger ones
// only make the value overflow (or vanish) sooner.
const maxExponent = 1 << 20

// number reads the number at the current position. It returns its text and
// how many decimal places the text denotes: the digits after the point,
// shifted by the exponent and never below 0 (so 1.50 has 2, 1e-7 has 7,
// 1.5e-7 has 8, 1.234567e2 has 4).
func (s *scanner) number() (text []byte, decimals int, err error) {
	start := s.pos
	i := s.pos
	d := s.data
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i++; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	default:
		s.pos = i
		return nil, 0, s.unexpected("a digit")
	}
	frac := 0
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
		if frac = i - j; frac == 0 {
			s.pos = i
			return nil, 0, s.unexpected("a digit after the decimal point")
		}
	}
	exp := 0
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		neg := false
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			neg = d[i] == '-'
			i++
		}
		j := i
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
			if exp < maxExponent {
				exp = exp*10 + int(d[i]-'0')
			}
		}
		if i == j {
			s.pos = i
			return nil, 0, s.unexpected("a digit in the exponent")
		}
		if neg {
			exp = -exp
		}
	}
	s.pos = i
	return d[start:i], max(frac-exp, 0), nil
}

// pow10 holds the powers of ten a float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat converts a number's text (as checked by number) to the nearest
// float64; a value beyond its range becomes ±Inf. With up to 15 significant
// digits and no exponent it needs one exact division (Clinger's fast path,
// as strconv's own), else it asks strconv.
func parseFloat(text []byte) float64 {
	i := 0
	neg := text[0] == '-'
	if neg {
		i = 1
	}
	var mant uint64
	digits, scale := 0, 0 // the value is mant * 10^scale
	point := false
	for ; i < len(text); i++ {
		switch c := text[i]; c {
		case '.':
			point = true
		case 'e', 'E':
			return slowFloat(text)
		default:
			if point {
				scale--
			}
			if mant == 0 && c == '0' {
				continue // a leading zero is not a significant digit
			}
			if digits == 15 {
				return slowFloat(text)
			}
			mant = mant*10 + uint64(c-'0')
			digits++
		}
	}
	if scale < -22 {
		return slowFloat(text)
	}
	f := float64(mant) / pow10[-scale]
	if neg {
		f = -f
	}
	return f
}

// slowFloat is strconv's answer: the nearest float64, ±Inf past its range.
func slowFloat(text []byte) float64 {
	f, _ := strconv.ParseFloat(string(text), 64)
	return f
}
