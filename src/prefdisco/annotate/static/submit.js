// Shared by the item pages: posts the form's answer as JSON and moves on to the next item.
// Each task kind's script calls prefdiscoSubmit with its form, its API and how to read an answer; without
// JavaScript the same form posts to its own page and the server redirects.
"use strict";
window.prefdiscoSubmit = function (formId, url, collect) {
  const form = document.getElementById(formId);
  if (!form) {
    return;
  }
  const message = document.getElementById("message");
  const button = document.getElementById("submit");

  function show(text) {
    message.textContent = text;
    message.hidden = false;
  }

  // collect(form) returns {payload: <JSON body>} or {problem: <text to show>}.
  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const answer = collect(form);
    if (answer.problem) {
      show(answer.problem);
      return;
    }
    button.disabled = true;
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(answer.payload),
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
};
