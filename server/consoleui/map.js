// The map of the plots: MapLibre GL JS (loaded by the page as a classic
// script, its CSP build) over an offline base map of country borders. All
// plots are one GeoJSON source, so ten thousand of them draw as fast as a
// few: a fill for areas, an outline once they are large enough on screen
// to have one, a circle of its declared area for a point, and a dot per
// plot when zoomed out, where a plot of a few hectares is smaller than a
// pixel. Each layer drawn costs every frame, so none is drawn at a zoom
// where it adds nothing.
//
// The steps of drawing the plots are marked with performance.mark
// ("plots:..."), which the browser test reads to say where the time goes.

const maplibregl = window.maplibregl;

export const verdicts = ["COMPLIANT", "HIGH_RISK", "FAILED"];

export const verdictColours = { COMPLIANT: "#2e7d32", HIGH_RISK: "#d32f2f", FAILED: "#7a7a7a" };

const colourOfVerdict = ["match", ["get", "status"],
  "COMPLIANT", verdictColours.COMPLIANT, "HIGH_RISK", verdictColours.HIGH_RISK, verdictColours.FAILED];

// Below this zoom every plot is also a dot at its centre; from the second
// an area has its outline (below it, a plot of a few hectares is a few
// pixels wide, all outline).
const dotsUntilZoom = 9;
const outlinesFromZoom = 10;

// In pixels of a tile (512 a side): more than a dot's radius.
const tileBuffer = 8;

// A point plot is a circle of its declared area, at least this many
// pixels in radius so that it shows zoomed out. Its radius in pixels
// doubles with each zoom: the feature's property r0 is that of zoom 0
// (see pointRadiusAtZoom0), and an exponential interpolation of base 2
// between a stop per zoom keeps it exact; the zoom must be the input of
// the top-level interpolation, so the minimum is taken at each stop.
const pointMinRadius = 4;
const pointRadius = ["interpolate", ["exponential", 2], ["zoom"],
  ...Array.from({ length: 25 }, (_, z) => [z, ["max", pointMinRadius, ["*", ["get", "r0"], 2 ** z]]]).flat()];

// pointRadiusAtZoom0 is the radius in pixels at zoom 0 of a circle of
// areaHa hectares at latitude lat: the world is 512 pixels wide at zoom 0
// in MapLibre, and a metre on the map is longer by 1 / cos(lat) in Web
// Mercator.
const equatorMetres = 40075016.686;
function pointRadiusAtZoom0(areaHa, lat) {
  const metres = Math.sqrt((areaHa * 10000) / Math.PI);
  return (metres * 512) / (equatorMetres * Math.cos((lat * Math.PI) / 180));
}

const noFeatures = { type: "FeatureCollection", features: [] };

const isArea = ["in", ["geometry-type"], ["literal", ["Polygon", "MultiPolygon"]]];
const isPoint = ["in", ["geometry-type"], ["literal", ["Point", "MultiPoint"]]];

// plotFilter is the filter expression of the plots whose verdict is in
// statuses and whose properties have the values of match ("" for any).
function plotFilter(statuses, match = {}) {
  const f = ["all", ["in", ["get", "status"], ["literal", statuses]]];
  for (const [key, value] of Object.entries(match)) {
    if (value) f.push(["==", ["get", key], value]);
  }
  return f;
}
const allPlots = plotFilter(verdicts);

// baseStyle has local sources only, and no text: no glyphs or sprites to
// fetch.
function baseStyle(basemapURL) {
  return {
    version: 8,
    sources: {
      countries: { type: "geojson", data: basemapURL, attribution: "Natural Earth (public domain)" },
      // A tile holds the plots within tileBuffer pixels of it, enough for
      // a dot or an outline that crosses its edge (MapLibre's default,
      // 128, makes each tile cut and draw many plots of its neighbours).
      plots: { type: "geojson", data: noFeatures, buffer: tileBuffer },
      dots: { type: "geojson", data: noFeatures, buffer: tileBuffer, maxzoom: dotsUntilZoom },
    },
    layers: [
      { id: "sea", type: "background", paint: { "background-color": "#dce9f2" } },
      { id: "land", type: "fill", source: "countries", paint: { "fill-color": "#f4f1ea" } },
      { id: "borders", type: "line", source: "countries", paint: { "line-color": "#a9a39a", "line-width": 0.6 } },
      { id: "plot-areas", type: "fill", source: "plots", filter: ["all", isArea, allPlots],
        paint: { "fill-color": colourOfVerdict, "fill-opacity": 0.45 } },
      { id: "plot-outlines", type: "line", source: "plots", filter: ["all", isArea, allPlots], minzoom: outlinesFromZoom,
        paint: { "line-color": colourOfVerdict, "line-width": 1.5 } },
      { id: "plot-points", type: "circle", source: "plots", filter: ["all", isPoint, allPlots],
        paint: { "circle-color": colourOfVerdict, "circle-opacity": 0.6, "circle-radius": pointRadius,
          "circle-stroke-color": colourOfVerdict, "circle-stroke-width": 1.5 } },
      { id: "plot-dots", type: "circle", source: "dots", maxzoom: dotsUntilZoom, filter: allPlots,
        paint: { "circle-color": colourOfVerdict, "circle-radius": 4, "circle-stroke-color": "rgba(255, 255, 255, 0.7)", "circle-stroke-width": 0.5 } },
    ],
  };
}

// eachPosition calls fn with every [lon, lat] of a GeoJSON geometry.
function eachPosition(coords, fn) {
  if (typeof coords[0] === "number") fn(coords);
  else for (const c of coords) eachPosition(c, fn);
}

// bounds is [[west, south], [east, north]] of geometries, or null.
export function bounds(geometries) {
  let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
  for (const g of geometries) {
    if (!g) continue;
    eachPosition(g.coordinates, ([x, y]) => {
      if (x < w) w = x;
      if (x > e) e = x;
      if (y < s) s = y;
      if (y > n) n = y;
    });
  }
  return w === Infinity ? null : [[w, s], [e, n]];
}

// Overlays of reference layers are drawn under the plots, which stay on
// top; a vector layer's overlay is its features (those of the view, read
// when it is shown and after each move), coloured by its kind, inside the
// dashed outline of its coverage box.
const overlaysBelow = "plot-areas";
const coverageOutline = { "line-color": "#17324d", "line-width": 1.5, "line-dasharray": [3, 2] };
const colourOfKind = ["match", ["get", "kind"],
  "deforestation", "#c62828", "protected_area", "#6a1b9a", "forest_cover_2020", "#2e7d32", "#17324d"];

// PlotMap draws a list of plots (the API's polygon items, with geometry).
// tileHeaders gives the headers a tile request of an overlay needs (the
// credential): MapLibre fetches tiles itself. onTruncated(layerId, n)
// hears, after each read of a vector overlay's features, that the view
// holds more than the n drawn (0: all of them are drawn, or the layer is
// hidden). coveredLeft answers how many pixels on the map's left a legend
// covers: fitting the map to plots keeps them clear of it.
export class PlotMap {
  constructor(container, { onSelect, tileHeaders, onTruncated = () => {}, coveredLeft = () => 0 } = {}) {
    this.onTruncated = onTruncated;
    this.coveredLeft = coveredLeft;
    maplibregl.setWorkerUrl(document.body.dataset.maplibreWorker);
    this.map = new maplibregl.Map({
      container,
      style: baseStyle(document.body.dataset.basemap),
      center: [0, 15],
      zoom: 1,
      renderWorldCopies: false,
      attributionControl: { compact: true },
      transformRequest: (url, kind) => (kind === "Tile" && tileHeaders ? { url, headers: tileHeaders() } : { url }),
    });
    this.map.addControl(new maplibregl.NavigationControl({ showCompass: false }));
    this.ready = new Promise((resolve) => this.map.once("load", resolve));
    this.filterKey = JSON.stringify(allPlots); // that of the style's layers
    this.overlaysShown = new Set(); // the IDs of the layers shown
    this.vectorOverlays = new Map(); // layer ID -> its features(bbox) reader
    this.featuresAsked = {}; // layer ID -> number of its last request
    this.map.on("moveend", () => {
      for (const id of this.overlaysShown) this.loadFeatures(id);
    });
    // A hook for the browser test, which pans the map to measure frame
    // times: deliberately on window, the map itself and nothing else.
    window.eudrMap = this.map;
    for (const layer of ["plot-areas", "plot-points", "plot-dots"]) {
      this.map.on("click", layer, (ev) => onSelect && onSelect(ev.features[0].properties.id));
      this.map.on("mouseenter", layer, () => (this.map.getCanvas().style.cursor = "pointer"));
      this.map.on("mouseleave", layer, () => (this.map.getCanvas().style.cursor = ""));
    }
  }

  // show draws plots in place of those drawn before, fits the map to them
  // and, once the map has drawn them, records how many the filter lets
  // through (countDrawn).
  async show(plots) {
    await this.ready;
    performance.mark("plots:show");
    const features = [];
    const dots = [];
    this.geometries = new Map();
    let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
    for (const p of plots) {
      if (!p.geometry) continue;
      const properties = { id: p.polygonId, status: p.eudrStatus, commodity: p.commodity,
        supplier: p.supplierId || "", job: p.jobId || "", country: p.producerCountry || "" };
      const b = bounds([p.geometry]);
      const centre = [(b[0][0] + b[1][0]) / 2, (b[0][1] + b[1][1]) / 2];
      if (p.geometryType === "Point" || p.geometryType === "MultiPoint") {
        // The area is of each point's plot, as declared.
        properties.r0 = pointRadiusAtZoom0(p.declaredAreaHa || p.areaHa || 0, centre[1]);
      }
      features.push({ type: "Feature", properties, geometry: p.geometry });
      dots.push({ type: "Feature", properties, geometry: { type: "Point", coordinates: centre } });
      this.geometries.set(p.polygonId, p.geometry);
      if (b[0][0] < w) w = b[0][0];
      if (b[0][1] < s) s = b[0][1];
      if (b[1][0] > e) e = b[1][0];
      if (b[1][1] > n) n = b[1][1];
    }
    this.features = features;
    performance.mark("plots:features-built");
    this.map.getSource("plots").setData({ type: "FeatureCollection", features });
    this.map.getSource("dots").setData({ type: "FeatureCollection", features: dots });
    performance.mark("plots:data-set");
    if (features.length) this.map.fitBounds([[w, s], [e, n]], { padding: this.padding(40), maxZoom: 12, duration: 0 });
    this.countDrawn();
  }

  // countDrawn records, once the map has drawn them, the number of plots
  // the filter lets through in document.body.dataset.plotsDrawn (read by
  // the browser tests).
  countDrawn() {
    delete document.body.dataset.plotsDrawn;
    const { statuses, match } = this.shown || { statuses: verdicts, match: {} };
    const n = (this.features || []).filter(({ properties: p }) => statuses.includes(p.status) &&
      Object.entries(match).every(([key, value]) => !value || p[key] === value)).length;
    const asked = (this.counted = (this.counted || 0) + 1);
    this.map.once("idle", () => {
      if (asked !== this.counted) return;
      performance.mark("plots:drawn");
      document.body.dataset.plotsDrawn = String(n);
    });
    // A map with nothing new to draw (the same filter set again) stays
    // idle and would not say so again: a frame makes it.
    this.map.triggerRepaint();
  }

  // only shows the plots whose verdict is in statuses and, for each
  // property of match given a value (commodity, supplier, job, country),
  // those with that value. A filter is applied by the map's workers as
  // they cut the plots into tiles: a change makes them cut all again, so
  // the same filter is not set twice.
  only(statuses, match = {}) {
    const f = plotFilter(statuses, match);
    this.shown = { statuses, match };
    const key = JSON.stringify(f);
    if (key !== this.filterKey) {
      this.filterKey = key;
      this.map.setFilter("plot-areas", ["all", isArea, f]);
      this.map.setFilter("plot-outlines", ["all", isArea, f]);
      this.map.setFilter("plot-points", ["all", isPoint, f]);
      this.map.setFilter("plot-dots", f);
    }
    this.countDrawn();
  }

  // padding is that of n pixels around what the map is fitted to, and on
  // the left of the legend too while the map is wide enough to spare it.
  padding(n) {
    const left = this.coveredLeft();
    const spare = this.map.getContainer().clientWidth - left - 3 * n > 200;
    return { top: n, bottom: n, right: n, left: spare ? left + n : n };
  }

  // flyTo brings one plot into view and, once there, records its ID in
  // document.body.dataset.plotShown.
  flyTo(id) {
    const g = this.geometries && this.geometries.get(id);
    if (!g) return;
    delete document.body.dataset.plotShown;
    this.map.once("moveend", () => {
      this.map.once("idle", () => (document.body.dataset.plotShown = id));
    });
    this.map.fitBounds(bounds([g]), { padding: this.padding(80), maxZoom: 15 });
  }

  // addOverlays adds reference layers, hidden until shown: each
  // {id, name, tiles, minZoom, bbox, features} with tiles the XYZ template
  // of a raster layer, or without tiles a vector layer: the outline of
  // bbox ([west, south, east, north]) and its features, read by
  // features(bbox of the view), a promise of a FeatureCollection.
  async addOverlays(overlays) {
    await this.ready;
    for (const o of overlays) {
      const id = "overlay-" + o.id;
      if (this.map.getSource(id)) continue;
      const hasBox = o.bbox && o.bbox.length === 4;
      if (o.tiles) {
        // The source's bounds keep MapLibre from asking for tiles where
        // the layer has none; below minZoom it asks for none at all.
        this.map.addSource(id, { type: "raster", tiles: [o.tiles], tileSize: 256, minzoom: o.minZoom || 0,
          ...(hasBox ? { bounds: o.bbox } : {}), attribution: o.name });
        this.map.addLayer({ id, type: "raster", source: id, layout: { visibility: "none" },
          paint: { "raster-opacity": 0.85, "raster-resampling": "nearest" } }, overlaysBelow);
      } else {
        const data = hasBox ? { type: "Feature", properties: {}, geometry: { type: "Polygon",
          coordinates: [[[o.bbox[0], o.bbox[1]], [o.bbox[2], o.bbox[1]], [o.bbox[2], o.bbox[3]], [o.bbox[0], o.bbox[3]], [o.bbox[0], o.bbox[1]]]] } } : noFeatures;
        this.map.addSource(id, { type: "geojson", data });
        this.map.addLayer({ id, type: "line", source: id, layout: { visibility: "none" }, paint: coverageOutline }, overlaysBelow);
        this.map.addSource(id + "-features", { type: "geojson", data: noFeatures, attribution: o.name });
        this.map.addLayer({ id: id + "-fill", type: "fill", source: id + "-features", layout: { visibility: "none" },
          paint: { "fill-color": colourOfKind, "fill-opacity": 0.25 } }, overlaysBelow);
        this.map.addLayer({ id: id + "-line", type: "line", source: id + "-features", layout: { visibility: "none" },
          paint: { "line-color": colourOfKind, "line-width": 1 } }, overlaysBelow);
        if (o.features) this.vectorOverlays.set(o.id, o.features);
      }
    }
  }

  // showOverlay shows or hides the overlay of layer id.
  // While a layer shows, the plots' fill is fainter, so the pixels under
  // a plot show through it.
  showOverlay(id, shown) {
    if (!this.map.getLayer("overlay-" + id)) return;
    for (const layer of ["overlay-" + id, "overlay-" + id + "-fill", "overlay-" + id + "-line"]) {
      if (this.map.getLayer(layer)) this.map.setLayoutProperty(layer, "visibility", shown ? "visible" : "none");
    }
    if (shown) this.overlaysShown.add(id);
    else {
      this.overlaysShown.delete(id);
      this.onTruncated(id, 0);
    }
    if (shown) this.loadFeatures(id);
    this.map.setPaintProperty("plot-areas", "fill-opacity", this.overlaysShown.size ? 0.12 : 0.45);
    // Once drawn, the layers shown are in document.body.dataset.overlaysDrawn
    // (read by the browser test).
    delete document.body.dataset.overlaysDrawn;
    this.map.once("idle", () => (document.body.dataset.overlaysDrawn = Array.from(this.overlaysShown).join(" ")));
  }

  // loadFeatures reads the features of vector overlay id in the view and
  // draws them; the answer to an older view is dropped. Past the API's
  // cap the answer is truncated: document.body.dataset.featuresTruncated
  // then names the layer, and zooming in shows the rest.
  async loadFeatures(id) {
    const read = this.vectorOverlays.get(id);
    if (!read) return;
    const b = this.map.getBounds();
    const view = [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()]
      .map((v, i) => Math.max(i % 2 ? -90 : -180, Math.min(i % 2 ? 90 : 180, v)));
    const asked = (this.featuresAsked[id] || 0) + 1;
    this.featuresAsked[id] = asked;
    let fc;
    try {
      fc = await read(view);
    } catch (err) {
      console.warn(`features of layer ${id}: ${err.message}`); // the outline still shows
      return;
    }
    if (asked !== this.featuresAsked[id] || !this.overlaysShown.has(id)) return;
    this.map.getSource("overlay-" + id + "-features").setData(fc);
    document.body.dataset.featuresTruncated = fc.truncated ? id : "";
    this.onTruncated(id, fc.truncated ? fc.features.length : 0);
    this.map.once("idle", () => (document.body.dataset.featuresDrawn = `${id} ${fc.features.length}`));
  }

  remove() {
    this.map.remove();
  }
}
