package geotiff

import "fmt"

// Reason is the kind of problem an Error reports, for programs; the
// Error's message is for people.
type Reason int

// Reasons a file is refused by Open, or a block by File.ReadWindow.
const (
	// NotTIFF: the file does not start with a TIFF or BigTIFF header.
	NotTIFF Reason = iota + 1
	// Malformed: a TIFF whose structure is broken: a required tag is
	// missing, a value has the wrong type or count, an offset or byte count
	// points outside the file, a block is shorter than its pixels need.
	Malformed
	// TooLarge: dimensions, block sizes or block tables beyond the limits
	// of this package (MaxDimension, MaxBlocks).
	TooLarge
	// UnsupportedSamples: not a single band of 8-bit unsigned integers.
	UnsupportedSamples
	// UnsupportedCompression: a compression other than none, LZW or Deflate.
	UnsupportedCompression
	// UnsupportedPredictor: a predictor other than none or horizontal.
	UnsupportedPredictor
	// UnsupportedLayout: a fill order, planar configuration or
	// photometric interpretation whose bytes are not plain sample values.
	UnsupportedLayout
	// Georeferencing: missing, rotated, sheared or flipped georeferencing,
	// several tie points, or bounds that are not longitudes and latitudes.
	Georeferencing
	// UnsupportedCRS: a coordinate reference system other than EPSG:4326,
	// or none declared.
	UnsupportedCRS
	// CorruptBlock: a strip or tile whose data does not decode to the
	// pixels it must hold (reported by File.ReadWindow).
	CorruptBlock
)

var reasonNames = map[Reason]string{
	NotTIFF:                "not TIFF",
	Malformed:              "malformed",
	TooLarge:               "too large",
	UnsupportedSamples:     "unsupported samples",
	UnsupportedCompression: "unsupported compression",
	UnsupportedPredictor:   "unsupported predictor",
	UnsupportedLayout:      "unsupported layout",
	Georeferencing:         "georeferencing",
	UnsupportedCRS:         "unsupported CRS",
	CorruptBlock:           "corrupt block",
}

func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Error is why a file cannot be read. Its message says what was found and,
// where there is one, what to do about it ("compression JPEG (7) is not
// supported: use none, LZW or Deflate"). Failures of the io.ReaderAt itself
// are not Errors: they come back wrapped as they are.
type Error struct {
	Reason  Reason
	Message string
}

func (e *Error) Error() string { return "geotiff: " + e.Message }

func errorf(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Message: fmt.Sprintf(format, args...)}
}
