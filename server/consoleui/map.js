// The map of the plots: MapLibre GL JS (loaded by the page as a classic
// script, its CSP build) over an offline base map of country borders. All
// plots are one GeoJSON source, so ten thousand of them draw as fast as a
// few: a fill and outline for areas, a circle for points, and a dot per
// plot when zoomed out, where a plot of a few hectares is smaller than a
// pixel.

const maplibregl = window.maplibregl;

export const verdicts = ["COMPLIANT", "HIGH_RISK", "FAILED"];

export const verdictColours = { COMPLIANT: "#2e7d32", HIGH_RISK: "#d32f2f", FAILED: "#7a7a7a" };

const colourOfVerdict = ["match", ["get", "status"],
  "COMPLIANT", verdictColours.COMPLIANT, "HIGH_RISK", verdictColours.HIGH_RISK, verdictColours.FAILED];

// Below this zoom every plot is also a dot at its centre.
const dotsUntilZoom = 9;

const isArea = ["in", ["geometry-type"], ["literal", ["Polygon", "MultiPolygon"]]];
const isPoint = ["in", ["geometry-type"], ["literal", ["Point", "MultiPoint"]]];

// baseStyle has local sources only, and no text: no glyphs or sprites to
// fetch.
function baseStyle(basemapURL) {
  return {
    version: 8,
    sources: {
      countries: { type: "geojson", data: basemapURL, attribution: "Natural Earth (public domain)" },
      plots: { type: "geojson", data: { type: "FeatureCollection", features: [] } },
      dots: { type: "geojson", data: { type: "FeatureCollection", features: [] } },
    },
    layers: [
      { id: "sea", type: "background", paint: { "background-color": "#dce9f2" } },
      { id: "land", type: "fill", source: "countries", paint: { "fill-color": "#f4f1ea" } },
      { id: "borders", type: "line", source: "countries", paint: { "line-color": "#a9a39a", "line-width": 0.6 } },
      { id: "plot-areas", type: "fill", source: "plots", filter: isArea,
        paint: { "fill-color": colourOfVerdict, "fill-opacity": 0.45 } },
      { id: "plot-outlines", type: "line", source: "plots", filter: isArea,
        paint: { "line-color": colourOfVerdict, "line-width": 1.5 } },
      { id: "plot-points", type: "circle", source: "plots", filter: isPoint,
        paint: { "circle-color": colourOfVerdict, "circle-radius": 6, "circle-stroke-color": "#fff", "circle-stroke-width": 1 } },
      { id: "plot-dots", type: "circle", source: "dots", maxzoom: dotsUntilZoom,
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
// top; a vector layer's overlay is the outline of its coverage box.
const overlaysBelow = "plot-areas";
const coverageOutline = { "line-color": "#17324d", "line-width": 1.5, "line-dasharray": [3, 2] };

// PlotMap draws a list of plots (the API's polygon items, with geometry).
// tileHeaders gives the headers a tile request of an overlay needs (the
// credential): MapLibre fetches tiles itself.
export class PlotMap {
  constructor(container, { onSelect, tileHeaders } = {}) {
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
    this.filter = null;
    this.overlaysShown = new Set(); // the IDs of the layers shown
    for (const layer of ["plot-areas", "plot-points", "plot-dots"]) {
      this.map.on("click", layer, (ev) => onSelect && onSelect(ev.features[0].properties.id));
      this.map.on("mouseenter", layer, () => (this.map.getCanvas().style.cursor = "pointer"));
      this.map.on("mouseleave", layer, () => (this.map.getCanvas().style.cursor = ""));
    }
  }

  // show draws plots in place of those drawn before, fits the map to them
  // and, once the map has drawn them, records their number in
  // document.body.dataset.plotsDrawn (read by the browser test).
  async show(plots) {
    await this.ready;
    const features = [];
    const dots = [];
    this.geometries = new Map();
    for (const p of plots) {
      if (!p.geometry) continue;
      const properties = { id: p.polygonId, status: p.eudrStatus, commodity: p.commodity };
      features.push({ type: "Feature", properties, geometry: p.geometry });
      const b = bounds([p.geometry]);
      dots.push({ type: "Feature", properties, geometry: { type: "Point", coordinates: [(b[0][0] + b[1][0]) / 2, (b[0][1] + b[1][1]) / 2] } });
      this.geometries.set(p.polygonId, p.geometry);
    }
    delete document.body.dataset.plotsDrawn;
    this.map.getSource("plots").setData({ type: "FeatureCollection", features });
    this.map.getSource("dots").setData({ type: "FeatureCollection", features: dots });
    const all = bounds(features.map((f) => f.geometry));
    if (all) this.map.fitBounds(all, { padding: 40, maxZoom: 12, duration: 0 });
    this.map.once("idle", () => {
      document.body.dataset.plotsDrawn = String(features.length);
    });
  }

  // only shows the plots whose verdict is in statuses and, when given, of
  // that commodity.
  only(statuses, commodity) {
    const f = ["all", ["in", ["get", "status"], ["literal", statuses]]];
    if (commodity) f.push(["==", ["get", "commodity"], commodity]);
    this.map.setFilter("plot-areas", ["all", isArea, f]);
    this.map.setFilter("plot-outlines", ["all", isArea, f]);
    this.map.setFilter("plot-points", ["all", isPoint, f]);
    this.map.setFilter("plot-dots", f);
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
    this.map.fitBounds(bounds([g]), { padding: 80, maxZoom: 15 });
  }

  // addOverlays adds reference layers, hidden until shown: each
  // {id, name, tiles, minZoom, bbox} with tiles the XYZ template of a
  // raster layer, or without tiles a vector layer drawn as the outline of
  // bbox ([west, south, east, north]).
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
      } else if (hasBox) {
        const [w, s, e, n] = o.bbox;
        this.map.addSource(id, { type: "geojson", data: { type: "Feature", properties: {},
          geometry: { type: "Polygon", coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] } } });
        this.map.addLayer({ id, type: "line", source: id, layout: { visibility: "none" }, paint: coverageOutline }, overlaysBelow);
      }
    }
  }

  // showOverlay shows or hides the overlay of layer id.
  // While a layer shows, the plots' fill is fainter, so the pixels under
  // a plot show through it.
  showOverlay(id, shown) {
    if (!this.map.getLayer("overlay-" + id)) return;
    this.map.setLayoutProperty("overlay-" + id, "visibility", shown ? "visible" : "none");
    if (shown) this.overlaysShown.add(id);
    else this.overlaysShown.delete(id);
    this.map.setPaintProperty("plot-areas", "fill-opacity", this.overlaysShown.size ? 0.12 : 0.45);
    // Once drawn, the layers shown are in document.body.dataset.overlaysDrawn
    // (read by the browser test).
    delete document.body.dataset.overlaysDrawn;
    this.map.once("idle", () => (document.body.dataset.overlaysDrawn = Array.from(this.overlaysShown).join(" ")));
  }

  remove() {
    this.map.remove();
  }
}
