// Loads the appliance's own OpenAPI document, starts Swagger UI on it and,
// once it has rendered, fills the contents sidebar: the sections of the
// introduction (which is long), the operation groups, webhooks and schemas.
// The page's Content-Security-Policy allows no inline script, hence this file.
(function () {
  "use strict";

  var root = document.getElementById("swagger-ui");
  var url = root.getAttribute("data-openapi-url");

  fetch(url)
    .then(function (resp) {
      if (!resp.ok) {
        throw new Error("GET " + url + " answered " + resp.status);
      }
      return resp.json();
    })
    .then(render, function (err) {
      root.textContent = "The OpenAPI document could not be loaded (" + err.message + ").";
    });

  function render(doc) {
    inlineWebhookPathItems(doc);
    SwaggerUIBundle({
      spec: doc,
      domNode: root,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
      // A reference to read: no "Try it out". The document's servers name
      // the default listener addresses, which the page's policy
      // (connect-src 'self') refuses whenever the page is reached another
      // way.
      supportedSubmitMethods: [],
      // Nothing is fetched from elsewhere: no validator badge, and the
      // document cannot be swapped for another by a ?url= query.
      validatorUrl: null,
      queryConfigEnabled: false,
      deepLinking: true,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      filter: true,
    });
    whenRendered(fillContents);
  }

  // whenRendered calls fn once Swagger UI has put the operations on the
  // page (it renders after SwaggerUIBundle returns, and onComplete may come
  // first when the document is given rather than fetched).
  function whenRendered(fn) {
    var rendered = function () {
      return root.querySelector(".info") && root.querySelector(".opblock-tag-section");
    };
    if (rendered()) {
      fn();
      return;
    }
    var observer = new MutationObserver(function () {
      if (rendered()) {
        observer.disconnect();
        fn();
      }
    });
    observer.observe(root, { childList: true, subtree: true });
  }

  // inlineWebhookPathItems replaces each webhook that is a $ref to
  // #/components/pathItems/... (every one of ours is) by the path item
  // itself: Swagger UI lists no webhook it would have to resolve.
  function inlineWebhookPathItems(doc) {
    var items = (doc.components && doc.components.pathItems) || {};
    var prefix = "#/components/pathItems/";
    Object.keys(doc.webhooks || {}).forEach(function (name) {
      var ref = doc.webhooks[name].$ref;
      if (typeof ref === "string" && ref.indexOf(prefix) === 0 && items[ref.slice(prefix.length)]) {
        doc.webhooks[name] = items[ref.slice(prefix.length)];
      }
    });
  }

  function fillContents() {
    var nav = document.getElementById("eudr-contents");
    var list = document.createElement("ul");

    var intro = root.querySelectorAll(".info .markdown h2, .info .renderedMarkdown h2");
    if (intro.length > 0) {
      list.appendChild(heading("Introduction"));
      intro.forEach(function (h) {
        h.id = "intro-" + slug(h.textContent);
        list.appendChild(entry(h.textContent, h));
      });
    }

    var tags = root.querySelectorAll(".opblock-tag-section .opblock-tag");
    if (tags.length > 0) {
      list.appendChild(heading("Operations"));
      tags.forEach(function (h) {
        var name = h.getAttribute("data-tag") || h.textContent;
        list.appendChild(entry(name, h));
      });
    }
    list.appendChild(heading("Events and schemas"));
    list.appendChild(entry("Webhook deliveries", function () { return root.querySelector(".webhooks"); }));
    list.appendChild(entry("Schemas", function () { return root.querySelector("section.models"); }));

    nav.appendChild(list);
    nav.hidden = false;
  }

  function heading(text) {
    var li = document.createElement("li");
    li.className = "eudr-contents-heading";
    li.textContent = text;
    return li;
  }

  // entry links to target (an element, or a function that finds it when the
  // link is followed) by scrolling, not by the URL's fragment, which Swagger
  // UI's deep links (#/tag/operation) own.
  function entry(text, target) {
    var li = document.createElement("li");
    var a = document.createElement("a");
    a.href = "#";
    a.textContent = text;
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      var el = typeof target === "function" ? target() : target;
      if (el) {
        el.scrollIntoView({ block: "start" });
      }
    });
    li.appendChild(a);
    return li;
  }

  function slug(text) {
    return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  }
})();
