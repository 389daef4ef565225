// Package geo decodes and validates polygon submissions (GeoJSON, RFC 7946)
// and judges plot geometry for screening. It is pure: no files, network,
// clock, logger or goroutines, and it imports nothing of ours. What is
// wrong with an input comes back as Problems, which the server turns into a
// 400 VALIDATION_FAILED listing every one.
//
// # Decoding
//
// ParseFeatureCollection reads the body in one pass with a small JSON
// scanner of its own (scan.go) instead of encoding/json or
// tidwall/geojson, for three reasons:
//
//   - Paths. Every problem names its place, down to the position:
//     features[3].geometry.coordinates[0][5]. encoding/json names the
//     first type error only; tidwall/geojson returns unexported errors
//     with no place at all.
//   - Decimals as written. INSUFFICIENT_PRECISION is about the text the
//     client sent (1.50 is two decimals, not one), which a float64 has
//     forgotten. The scanner counts them while it reads the number.
//   - Speed. A 10,000-feature body is some 50 MB of coordinates; one pass
//     with no reflection and no per-number allocation keeps it well under
//     a second (BenchmarkParseFeatureCollection_10k). Decoding into
//     []any or json.RawMessage trees would walk the bytes several times.
//
// tidwall/geojson, the design's geometry library, comes in where geometry
// is used rather than read: Geometry.Object builds its objects from the
// decoded positions for spatial predicates against reference layers.
//
// Malformed JSON (including invalid UTF-8 in strings, or nesting deeper than
// 512) is one MALFORMED_JSON problem at "body" with line, column and byte
// offset: nothing after it can be trusted. Otherwise every problem found is
// returned, up to ParseOptions.MaxProblems.
//
// # Synchronous rules
//
// Codes and paths of the 400's details (docs/screening.md); i is the
// feature's index:
//
//	body, type, features          INVALID_VALUE / REQUIRED: not an object, not "FeatureCollection", no features
//	crs                           INVALID_VALUE: a crs member that does not name WGS 84 lon/lat
//	features[i], .type            INVALID_VALUE / REQUIRED: not an object, not "Feature"
//	features[i].geometry          REQUIRED (missing or null) / INVALID_VALUE (not an object)
//	features[i].geometry.type     INVALID_GEOMETRY_TYPE: anything but Polygon, MultiPolygon, Point, MultiPoint
//	...coordinates[j]             INVALID_RING (< 4 positions), INVALID_COORDINATE_CLOSURE (last != first),
//	                              CROSSES_ANTIMERIDIAN (a side joins longitudes more than 180° apart);
//	                              for a MultiPolygon ...coordinates[p][j]
//	...coordinates[j][k]          INVALID_COORDINATE_RANGE (longitude outside ±180, latitude outside ±90);
//	                              INVALID_VALUE: not an array of 2 or 3 numbers
//	features[i].properties.x      REQUIRED, INVALID_VALUE; POINT_AREA_TOO_LARGE at .area
//
// A ring is closed when its last longitude and latitude equal its first
// (an altitude is ignored). A side from 179.995 to -179.995 is 0.01° long
// the short way across the antimeridian, as RFC 7946 and PolygonArea read
// it, and 359.99° long in plain longitude, as the EU information system,
// bounding boxes and the screening read it: area and screening would
// disagree, so such a ring is refused (CROSSES_ANTIMERIDIAN, once per
// ring, naming the first such side) and the client asked to split the
// plot at 180°. A ring touching 180 or -180 without crossing is accepted,
// as is a MultiPolygon split there (one part ending at 180, the other
// starting at -180). ParseOptions.DeferAntimeridian leaves these rings to
// Check instead, for requests accepted before the rule. A position must be 2 numbers, or 3 with an
// altitude, which is dropped. Coordinates nested too deep or too shallow
// for their type (a Polygon sent as a MultiPolygon, a Point as [[lon, lat]]
// as in the EU's own example) are one INVALID_VALUE at .coordinates, not
// one per position; likewise the first malformed position of a ring or
// MultiPoint is reported with a count of the others. Out-of-range positions
// are each reported. LineString and MultiLineString do not enclose a plot,
// and a GeometryCollection is refused: send its parts as features of their
// own. Duplicate members ("type" twice) are INVALID_VALUE: JSON readers
// disagree on which one wins.
//
// Past ParseOptions.MaxProblems (default 1000) one TOO_MANY_PROBLEMS says
// how many more there are; past ParseOptions.MaxFeatures the answer is
// ErrTooManyFeatures (the server answers 413), decided before the rest is
// read. ParseFeature reads one stored Feature.Raw back with the same rules.
//
// # Properties
//
// Names are case-sensitive; unknown properties are ignored (GeoJSON from
// GIS tools carries all sorts), but a known one of the wrong JSON type is
// INVALID_VALUE, and null counts as absent. The EU information system's
// own names ProducerName, ProducerCountry, ProductionPlace and Area are
// read as ours (both spellings in one feature are a duplicate member);
// Commodity is not, and the REQUIRED issue of a missing commodity says so.
//
//	commodity        required: cattle, cocoa, coffee, oil_palm, soya, wood, rubber
//	producerCountry  required: ISO 3166-1 alpha-2 in upper case (249 codes, and XK)
//	area             hectares, a JSON number ("3" is refused: the EU reads it as 0).
//	                 Point and MultiPoint: required, at least 0.0001, at most 4
//	                 (POINT_AREA_TOO_LARGE), except for cattle, whose point may
//	                 stand for a larger establishment as in the EU rules.
//	                 Polygons: optional, positive (checked against the geodesic
//	                 area when screening).
//	producerName     optional, at most 500 characters (the EU's producer name limit)
//	productionPlace  optional, at most 500 characters
//	externalId       optional, at most 128 characters
//	supplierId       optional, an ERP vendor ID as supplier mappings take it:
//	                 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit
//
// A MultiPoint is several plots of at most 4 ha each sharing the feature's
// properties, as the EU's file format treats it; its area is each plot's.
//
// # Precision
//
// Feature.MaxDecimals is the most decimal places any longitude or latitude
// of the feature was written with: the digits after the point, shifted by
// an exponent, never below 0. Trailing zeros count: the client wrote them.
//
//	-61.5        1      1.50         2       100        0
//	1e-7         7      1.5e-7       8       1.234567e2 4
//
// # Check
//
// Check decides the FAILED reasons that need only the geometry, in this
// order: CROSSES_ANTIMERIDIAN (only for rings the parser was told to
// leave, see above); HOLES_NOT_SUPPORTED; on the coordinates as written,
// DEGENERATE_RING (fewer than 3 distinct corners, or all on one line) and
// SELF_INTERSECTION (sides crossing, touching or overlapping: figure 8s,
// spikes, folds, a corner visited twice), ring by ring, then
// OVERLAPPING_PARTS (see below); INSUFFICIENT_PRECISION (no coordinate
// with 6 or more decimals, docs/screening.md); then, at the 6 decimals the
// EU information system keeps, DUPLICATE_VERTICES_AFTER_ROUNDING (two
// consecutive corners of a ring are or become one point, or the ring
// becomes degenerate or self-intersecting), and last OVERLAPPING_PARTS
// for parts that come to overlap or share a side only there (the detail
// says "with coordinates truncated to 6 decimals ..."; the reason stays
// OVERLAPPING_PARTS because the fix is to the parts, not to a ring). The
// EU documents that it truncates, and elsewhere speaks of rounding: a
// geometry must survive both. GEOMETRY_TOO_COMPLEX is a guard against
// hostile input, never reached by plot boundaries. Either winding order
// is accepted (RFC 7946 recommends counter-clockwise; the EU does not
// say).
//
// OVERLAPPING_PARTS is the OGC simple features rule for a MultiPolygon,
// as GEOS applies it: its polygons' interiors must be disjoint, and their
// boundaries may meet only at finitely many points. Two parts fail when a
// side of one crosses a side of the other, two sides share a stretch (the
// parts share a side), one part's area reaches into the other's where
// their boundaries meet at a point, or one lies wholly inside the other.
// Parts touching at corners are valid. With valid parts a MultiPolygon's
// area is the sum of its parts' areas, as PolygonArea is summed. Only
// parts whose bounding boxes meet are compared (an R-tree finds them),
// and of those only the sides reaching into both boxes (found from each
// part's sides sorted by their west end, not by going round the whole
// ring), swept as within a ring; whether one part lies inside another is
// decided by one corner and the sides spanning its longitude. The same
// budget as for a ring bounds the work, so a MultiPolygon of many parts
// costs about n log n however they are laid out, and a hostile one
// (thousands of parts whose boxes all meet) is GEOMETRY_TOO_COMPLEX.
//
// The predicates are exact: corners are put on an integer grid of
// nano-degrees (exact for coordinates of up to 9 decimals) or
// micro-degrees, and orientations are computed in 64 or 128-bit integers,
// so collinear means collinear. Sides are swept west to east and only
// pairs whose bounding boxes overlap are compared, about O(n log n) for a
// plot boundary.
//
// # Screening
//
// A Layer is a reference layer as a plain value (kind, provenance,
// coverage polygons, features); NewIndex puts the bounding boxes of their
// features and coverage polygons in two R-trees (tidwall/rtree) and never
// changes them after, so an Index is safe for concurrent use.
// Index.Screen takes the features whose boxes meet those of the plot's
// polygons (part by part: the box round a MultiPolygon split at 180°
// spans the globe) and clips the plot against each with
// github.com/peterstace/simplefeatures (a pure Go overlay on a doubly connected edge list that nodes and snaps
// near-coincident vertices, so shared edges and corners come out as
// lines and points, which have no area). The pieces are unioned per layer,
// so features overlapping each other count once, and measured with
// PolygonArea. Per layer the answer is the overlap in hectares and as a
// percentage of the plot, the features overlapped with positive area, and
// whether the layer covers the plot: only when the plot lies entirely in
// the union of the layer's coverage polygons (a deforestation layer with
// data for half a plot cannot clear the other half). A layer without
// coverage polygons covers nothing. A Point is inside a feature when it is
// inside or on its boundary, and then overlaps it by the plot's declared
// area (ScreenArea; Screen counts 0 ha). When a feature holds the
// bounding box of each of the plot's polygons, or each is held by one of a
// layer's coverage polygons, clipping is skipped.
//
// # Verdict
//
// Assess turns a feature and an Index into eudrStatus, failureReason,
// areaHa and risk (docs/screening.md), the first of these deciding:
//
//	Check                              FAILED, Check's reason
//	polygon area (see below)           FAILED AREA_MISMATCH
//	no deforestation layer covers it   FAILED NO_REFERENCE_COVERAGE
//	deforestation overlap > threshold  HIGH_RISK DEFORESTATION_AFTER_CUTOFF
//	protected overlap > threshold      HIGH_RISK PROTECTED_AREA_OVERLAP
//	riskScore > MaxRiskScore           HIGH_RISK, reason as below
//	otherwise                          COMPLIANT
//
// areaHa is the geodesic area (PolygonArea) of each polygon, summed, or
// for points the declared area times the number of points. A polygon's
// declared properties.area may be off it by AreaTolerance times it (10 %
// by default, inclusive). Only deforestation layers give coverage: the
// appliance never calls a plot compliant without data, and a missing
// protected-area or forest layer is not a reason to fail. Overlaps count
// from every layer of the kind, covered or not, the largest one standing
// for the kind (layers are separate sources and are not unioned).
//
// Rules and defaults (DefaultRules): OverlapThresholdPct 0, so any overlap
// of positive area counts (the regulation has no de minimis; Whisp's 10 %
// allows for 10 m raster noise and is a setting away); MaxRiskScore 50;
// AreaTolerance 0.10. riskScore (RiskScore) is 0-100 and never falls
// when an overlap grows:
//
//	deforestedPct > threshold   100
//	protectedPct  > threshold   75 + protectedPct/4
//	otherwise                   min(50, forestPct/2 + deforestedPct + protectedPct/2)
//
// rounded half away from zero, forestPct being the overlap with 2020
// forest cover. With the default threshold the last line is forest cover
// alone, and at most 50, so under the default MaxRiskScore the score rule
// adds nothing; an operator lowering it flags plots in 2020 forest
// (RISK_SCORE_ABOVE_MAX) or with overlaps under a raised threshold
// (DEFORESTATION_AFTER_CUTOFF if any deforestation overlaps, else
// PROTECTED_AREA_OVERLAP). Risk is filled for COMPLIANT and HIGH_RISK only.
//
// # Sandbox
//
// SandboxLayers is the sandbox fixture table (docs/sandbox.md) as two layers
// built in code: deforestation over lon -62..-61, lat -11..-10 and a
// protected area over lon -55..-54, lat -5..-4, each covering the world but
// lon 10..11, lat 10..11 (four rectangles tiled around it). Each box is
// grown by 0.00001° (about 1.1 m) on every side, so that a plot touching a
// box only along an edge or at a corner overlaps it by a sliver and gets the
// box's outcome, as the table says of any plot "overlapping or touching
// these boxes": HIGH_RISK beside the first two boxes, FAILED
// NO_REFERENCE_COVERAGE beside the third. A plot overlapping a box gets its
// outcome whatever the share, and a Point on a box's edge is inside it. The
// same rules apply in production; the sandbox differs only in its layers.
// Their SHA256 is LayerSHA256, over a canonical JSON encoding.
//
// # Rasters
//
// Raster layers (RasterLayer: Hansen loss-year, JRC forest 2020, alerts)
// are folders of single-band uint8 GeoTIFF tiles, read through
// RasterReader (package geotiff reads only the windows the bounding boxes
// of a plot's polygons touch, so the two halves of a plot split at 180°
// cost their own pixels, not the band between them). ZonalStats, and Assess for each raster layer, count the
// pixels a plot covers by value: a pixel belongs to a polygon when its
// centre is inside or on it, a point plot is the pixel it falls in with
// its declared area, and a pixel's area is its cell's on the WGS84
// ellipsoid (one per row). A plot over several tiles is the sum of its
// parts in each.
package geo
