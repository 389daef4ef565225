#!/usr/bin/env python3
"""Writes the libtiff fixtures of TestOpen_Libtiff: files compressed by
libtiff itself (not by geotifftest), so that the reader's LZW, Deflate and
predictor decoding is checked against the reference implementation.

    python3 make.py            # needs libtiff.so.6 (4.x); no other package

libtiff writes the strips or tiles; GeoTIFF tags (which plain libtiff does
not know) are then added by rewriting the directory at the end of the file.
Pixels are pixel(col, row) below; TestOpen_Libtiff has the same function.

With a list of .tif files instead, it decodes each with libtiff and checks
it against pixel(): that is how geotifftest's output was checked
(python3 make.py /tmp/out/*.tif).
"""
import ctypes, struct, sys

lt = ctypes.CDLL("libtiff.so.6")
lt.TIFFOpen.restype = ctypes.c_void_p
lt.TIFFOpen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
lt.TIFFClose.argtypes = [ctypes.c_void_p]
lt.TIFFWriteEncodedStrip.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_ssize_t]
lt.TIFFWriteEncodedTile.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_ssize_t]
lt.TIFFReadEncodedStrip.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_ssize_t]
lt.TIFFReadEncodedTile.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_ssize_t]
lt.TIFFReadEncodedStrip.restype = ctypes.c_ssize_t
lt.TIFFReadEncodedTile.restype = ctypes.c_ssize_t
lt.TIFFIsTiled.argtypes = [ctypes.c_void_p]
lt.TIFFNumberOfStrips.argtypes = [ctypes.c_void_p]
lt.TIFFNumberOfTiles.argtypes = [ctypes.c_void_p]
lt.TIFFSetField.argtypes = None  # variadic
lt.TIFFGetField.argtypes = None

W, L = 150, 100


def pixel(c, r):
    if (c // 16 + r // 16) % 3 == 0:
        return 0  # constant areas: long LZW strings
    return (c * 7 + r * 13 + (c * r) // 5) % 256


def setf(t, tag, v):
    if lt.TIFFSetField(ctypes.c_void_p(t), ctypes.c_uint32(tag), ctypes.c_uint32(v)) != 1:
        raise SystemExit("TIFFSetField %d" % tag)


def write(name, mode, compression, predictor, rows=0, tile=None):
    t = lt.TIFFOpen(name.encode(), mode.encode())
    for tag, v in [(256, W), (257, L), (258, 8), (277, 1), (262, 1), (284, 1), (339, 1), (259, compression)]:
        setf(t, tag, v)
    if predictor:
        setf(t, 317, 2)
    if tile:
        tw, th = tile
        setf(t, 322, tw)
        setf(t, 323, th)
        n = 0
        for ty in range(0, L, th):
            for tx in range(0, W, tw):
                buf = bytes(pixel(tx + c, ty + r) if tx + c < W and ty + r < L else 0
                            for r in range(th) for c in range(tw))
                if lt.TIFFWriteEncodedTile(ctypes.c_void_p(t), n, buf, len(buf)) < 0:
                    raise SystemExit("write tile")
                n += 1
    else:
        setf(t, 278, rows)
        for s, y in enumerate(range(0, L, rows)):
            buf = bytes(pixel(c, r) for r in range(y, min(y + rows, L)) for c in range(W))
            if lt.TIFFWriteEncodedStrip(ctypes.c_void_p(t), s, buf, len(buf)) < 0:
                raise SystemExit("write strip")
    lt.TIFFClose(ctypes.c_void_p(t))
    add_geotags(name)


def add_geotags(name):
    """Adds ModelPixelScale, ModelTiepoint, GeoKeyDirectory (EPSG:4326,
    PixelIsArea) and GDAL_NODATA "0" to the first IFD, placing the raster at
    12 W, 6 N with pixels of 0.001 degree."""
    b = bytearray(open(name, "rb").read())
    e = "<" if b[:2] == b"II" else ">"
    big = struct.unpack(e + "H", b[2:4])[0] == 43
    if big:
        off = struct.unpack(e + "Q", b[8:16])[0]
        n = struct.unpack(e + "Q", b[off:off + 8])[0]
        ents = [bytes(b[off + 8 + 20 * i: off + 28 + 20 * i]) for i in range(n)]
    else:
        off = struct.unpack(e + "I", b[4:8])[0]
        n = struct.unpack(e + "H", b[off:off + 2])[0]
        ents = [bytes(b[off + 2 + 12 * i: off + 14 + 12 * i]) for i in range(n)]
    if len(b) % 2:
        b += b"\0"
    new = []
    for tag, typ, fmt, vals in [
        (33550, 12, "d", [0.001, 0.001, 0.0]),
        (33922, 12, "d", [0, 0, 0, -12.0, 6.0, 0]),
        (34735, 3, "H", [1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 1, 2048, 0, 1, 4326]),
        (42113, 2, "s", b"0\0"),
    ]:
        data = vals if fmt == "s" else struct.pack(e + fmt * len(vals), *vals)
        count = len(vals)
        at = len(b)
        b += data + (b"\0" if len(data) % 2 else b"")
        if big:
            val = data.ljust(8, b"\0") if len(data) <= 8 else struct.pack(e + "Q", at)
            new.append(struct.pack(e + "HHQ", tag, typ, count) + val)
        else:
            val = data.ljust(4, b"\0") if len(data) <= 4 else struct.pack(e + "I", at)
            new.append(struct.pack(e + "HHI", tag, typ, count) + val)
    ents = sorted(ents + new, key=lambda x: struct.unpack(e + "H", x[:2])[0])
    at = len(b)
    if big:
        b += struct.pack(e + "Q", len(ents)) + b"".join(ents) + struct.pack(e + "Q", 0)
        b[8:16] = struct.pack(e + "Q", at)
    else:
        b += struct.pack(e + "H", len(ents)) + b"".join(ents) + struct.pack(e + "I", 0)
        b[4:8] = struct.pack(e + "I", at)
    open(name, "wb").write(b)


def check(name):
    """Decodes name with libtiff and compares it with pixel()."""
    t = lt.TIFFOpen(name.encode(), b"r")
    if not t:
        raise SystemExit("libtiff cannot open " + name)
    w, h = ctypes.c_uint32(), ctypes.c_uint32()
    lt.TIFFGetField(ctypes.c_void_p(t), ctypes.c_uint32(256), ctypes.byref(w))
    lt.TIFFGetField(ctypes.c_void_p(t), ctypes.c_uint32(257), ctypes.byref(h))
    w, h = w.value, h.value
    got = bytearray(w * h)
    if lt.TIFFIsTiled(ctypes.c_void_p(t)):
        tw, th = ctypes.c_uint32(), ctypes.c_uint32()
        lt.TIFFGetField(ctypes.c_void_p(t), ctypes.c_uint32(322), ctypes.byref(tw))
        lt.TIFFGetField(ctypes.c_void_p(t), ctypes.c_uint32(323), ctypes.byref(th))
        tw, th = tw.value, th.value
        buf = ctypes.create_string_buffer(tw * th)
        n = 0
        for ty in range(0, h, th):
            for tx in range(0, w, tw):
                if lt.TIFFReadEncodedTile(ctypes.c_void_p(t), n, buf, tw * th) < 0:
                    raise SystemExit("%s: tile %d does not decode" % (name, n))
                for r in range(min(th, h - ty)):
                    k = min(tw, w - tx)
                    got[(ty + r) * w + tx:(ty + r) * w + tx + k] = buf.raw[r * tw:r * tw + k]
                n += 1
    else:
        rps = ctypes.c_uint32()
        lt.TIFFGetField(ctypes.c_void_p(t), ctypes.c_uint32(278), ctypes.byref(rps))
        rps = min(rps.value, h)
        buf = ctypes.create_string_buffer(w * rps)
        for s, y in enumerate(range(0, h, rps)):
            n = lt.TIFFReadEncodedStrip(ctypes.c_void_p(t), s, buf, w * rps)
            if n != w * min(rps, h - y):
                raise SystemExit("%s: strip %d decodes to %d bytes" % (name, s, n))
            got[y * w:y * w + n] = buf.raw[:n]
    lt.TIFFClose(ctypes.c_void_p(t))
    want = bytes(pixel(c, r) for r in range(h) for c in range(w))
    if bytes(got) != want:
        i = next(i for i in range(len(want)) if got[i] != want[i])
        raise SystemExit("%s: pixel (%d, %d) is %d, want %d" % (name, i % w, i // w, got[i], want[i]))
    print("ok", name, "%dx%d" % (w, h))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        for f in sys.argv[1:]:
            check(f)
        sys.exit(0)
    write("lzw-strips.tif", "wl", 5, False, rows=7)
    write("lzw-predictor-tiles.tif", "wl", 5, True, tile=(64, 48))
    write("deflate-predictor-strips-bigendian.tif", "wb", 8, True, rows=16)
    write("deflate-legacy-tiles.tif", "wl", 32946, False, tile=(32, 32))
    write("lzw-tiles-bigtiff.tif", "w8", 5, False, tile=(128, 128))
    write("lzw-one-strip.tif", "wl", 5, True, rows=L)
    for f in ["lzw-strips.tif", "lzw-predictor-tiles.tif", "deflate-predictor-strips-bigendian.tif",
              "deflate-legacy-tiles.tif", "lzw-tiles-bigtiff.tif", "lzw-one-strip.tif"]:
        check(f)
