// Submits an item's answers to POST /api/annotations and moves on to the next item.
// Without JavaScript the same form posts to /annotate/<n> and the server redirects.
"use strict";
(function () {
  const form = document.getElementById("annotation-form");
  if (!form) {
    return;
  }
  const message = document.getElementById("message");
  const button = document.getElementById("submit");

  function show(text) {
    message.textContent = text;
    message.hidden = false;
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
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
      show("Please answer every attribute (" + missing.length + " still open).");
      return;
    }
    button.disabled = true;
    try {
      const response = await fetch("/api/annotations", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ scenario_id: form.dataset.scenarioId, labels: labels }),
      });
      const data = await response.json().catch(function () { return {}; });
      if (!response.ok) {
        show(data.detail || "The server answered " + response.status + ".");
        return;
      }
      window.location.assign(data.next);
    } catch (error) {
      show("Could not reach the server: " + error);
    } finally {
      button.disabled = false;
    }
  });
})();
