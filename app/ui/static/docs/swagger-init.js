/* Swagger UI from the vendored bundle, pointed at this service's OpenAPI document.
   An external file (not inline) so the page's Content-Security-Policy can forbid inline
   scripts. No validator badge (it would call validator.swagger.io). */
window.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var el = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: el.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset]
  });
});
