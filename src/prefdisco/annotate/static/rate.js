// Submits a response rating to POST /api/ratings and moves on to the next item.
// Without JavaScript the same form posts to /rate/<n> and the server redirects.
"use strict";
(function () {
  const form = document.getElementById("rating-form");
  if (!form) {
    return;
  }
  const message = document.getElementById("message");
  const button = document.getElementById("submit");
  const levels = document.getElementById("levels");

  function show(text) {
    message.textContent = text;
    message.hidden = false;
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const checked = form.querySelector("input[name=score]:checked");
    levels.classList.toggle("missing", !checked);
    if (!checked) {
      show("Please choose a score from 1 to 5.");
      return;
    }
    button.disabled = true;
    try {
      const response = await fetch("/api/ratings", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ position: Number(form.dataset.position), score: Number(checked.value) }),
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
