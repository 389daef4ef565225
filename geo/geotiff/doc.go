// Package geotiff reads windows of single-band uint8 GeoTIFFs in WGS 84
// longitude and latitude, the form of the global forest rasters screening
// uses offline: the Hansen/UMD Global Forest Change tiles (lossyear,
// treecover2000, datamask: 10 x 10 degree tiles of 40,000 x 40,000 pixels
// of 0.00025 degree) and the JRC Global Forest Cover 2020 tiles (a binary
// forest mask of about 10 m). It needs neither GDAL nor a network, and it
// does no I/O of its own: it reads through the io.ReaderAt it is given.
//
// # Reading
//
// Open reads the header and the first image file directory, and checks
// everything it will rely on, so that a file it accepts reads correctly or
// fails on a corrupt block; it reads no pixels. File.ReadWindow then
// decodes a rectangle of pixels, decompressing only the strips or tiles
// that rectangle touches: a 100 x 100 window of a 40,000 x 40,000 file
// costs one to four 256 x 256 tiles, or 100 one-row strips, never the
// file. Decoded blocks are kept in a Cache, least recently used out first,
// within a byte budget (DefaultCacheBytes, 64 MiB, unless Options name
// another); files may share one. Blocks larger than an eighth of the
// budget are not kept but streamed: decompressed up to the window's last
// row, a row at a time. Uncompressed blocks are read in place.
//
// Georef places the pixels on longitudes and latitudes: a raster's
// Bounds, the position of a corner or Center. Which pixel holds a point
// on an edge between two is the caller's rule to decide.
//
// # What it reads
//
//   - Classic TIFF and BigTIFF, little- and big-endian; the first image only
//     (overviews and masks after it are ignored).
//   - One sample per pixel of 8 bits, unsigned (SampleFormat 1), grey-scale
//     or palette: the values read are the stored values.
//   - Strips (RowsPerStrip, StripOffsets, StripByteCounts) or tiles
//     (TileWidth, TileLength, TileOffsets, TileByteCounts). Blocks with an
//     offset or byte count of 0 are sparse (GDAL's SPARSE_OK) and read as
//     the nodata value, or 0. Blocks may share bytes.
//   - Compression none (1), LZW (5) and Deflate (8, and the older 32946),
//     with or without the horizontal predictor (2). LZW is TIFF's variant:
//     codes most significant bit first, widened one code early (the
//     "early change" of libtiff). Whole blocks are decoded by
//     internal/tifflzw, which copies each code's string from where it was
//     last written instead of walking it a byte at a time (fuzzed against
//     golang.org/x/image/tiff/lzw, which streams the blocks too large to
//     keep). Deflate blocks decoded whole have their Adler-32 checked.
//   - Georeferencing by ModelPixelScale (33550) with one ModelTiepoint
//     (33922), or by a ModelTransformation (34264) without rotation or
//     shear; RasterPixelIsArea or RasterPixelIsPoint (GTRasterTypeGeoKey).
//   - The CRS EPSG:4326: GeographicTypeGeoKey 4326, or a user-defined
//     geographic CRS on the WGS 84 datum (6326), in degrees, from
//     Greenwich.
//   - GDAL_NODATA (42113): a number; one no uint8 equals (-9999, nan)
//     means no nodata.
//
// # What it refuses
//
// Open returns an *Error whose Reason classifies the refusal and whose
// message says what was found and what to do: "compression JPEG (7) is not
// supported: use none, LZW or Deflate (gdal_translate -co COMPRESS=LZW)".
// It refuses files that are not TIFF; structure that is broken or points
// outside the file (tags of the wrong type or count, offsets or byte
// counts past the end, uncompressed blocks shorter than their pixels,
// compressed blocks too small to hold them at the format's best ratio);
// sizes beyond MaxDimension or MaxBlocks; more than one band, other than
// 8 bits, signed or floating-point samples; other photometric
// interpretations, FillOrder 2, unknown planar configurations; other
// compressions (JPEG, PackBits, ZSTD, LERC, WebP, ...) and predictors
// (floating point); files with no georeferencing, several tie points
// (ground control points), a rotated, sheared, south-up or mirrored
// raster, or bounds that cannot be degrees; any CRS but EPSG:4326,
// including none; a GDAL_NODATA that is not a number. ReadWindow returns
// an *Error with Reason CorruptBlock for a block whose data does not
// decode to its pixels (including LZW from libtiff before 1993).
// Failures of the io.ReaderAt come back wrapped, never as an *Error.
//
// Open never panics (FuzzOpen), and allocates nothing in proportion to a
// size field before checking it against the file's size: a tag's values
// must lie in the file before they are read, a block table must match the
// raster's blocks and fit MaxBlocks, and a block must be large enough for
// its pixels at its compression's best ratio before it is decoded.
//
// # Pixels and coordinates
//
// Pixel (col, row) covers longitudes West+col*DX to West+(col+1)*DX and
// latitudes North-(row+1)*DY to North-row*DY. For RasterPixelIsArea the
// tie point is that outer corner of the upper-left pixel; for
// RasterPixelIsPoint it is the pixel's centre, and Open moves the
// georeference half a pixel out, as GDAL does, so the rule above holds
// either way.
//
// # Sources
//
//   - TIFF Revision 6.0 (Adobe, 1992): structure, tags, LZW (section 13),
//     predictor (section 14), tiles (section 15).
//   - BigTIFF (libtiff's design, http://www.simplesystems.org/libtiff/bigtiffdesign.html).
//   - OGC GeoTIFF Standard 1.1 (OGC 19-008r4, 2019): the model tags, the
//     GeoKey directory, raster space (PixelIsArea/Point).
//   - libtiff 4.x tif_lzw.c (LZW's code widths, the Clear at 4094, the test
//     for old-style LZW), tif_predict.c.
//   - GDAL's GTiff driver documentation: GDAL_NODATA, SPARSE_OK.
//
// testdata/libtiff holds files compressed by libtiff 4.5 itself, and
// make.py, which wrote them and which checked geotifftest's output with
// libtiff in the other direction.
package geotiff
