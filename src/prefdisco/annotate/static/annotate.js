// The attribute page's answer for POST /api/annotations: Yes/No for every candidate (see submit.js).
"use strict";
window.prefdiscoSubmit("annotation-form", "/api/annotations", function (form) {
  const labels = {};
  const missing = [];
  for (const fieldset of form.querySelectorAll("fieldset[data-attribute]")) {
    const checked = fieldset.querySelector("input[type=radio]:checked");
    fieldset.classList.toggle("missing", !checked);
    if (checked) {
      labels[fieldset.dataset.attribute] = checked.value === "1";
    } else {
      missing.push(fieldset.dataset.attribute);
    }
  }
  if (missing.length > 0) {
    return { problem: "Please answer every attribute (" + missing.length + " still open)." };
  }
  return { payload: { scenario_id: form.dataset.scenarioId, labels: labels } };
});
