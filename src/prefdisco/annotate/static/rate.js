// The rating page's answer for POST /api/ratings: one score 1-5 (see submit.js).
"use strict";
window.prefdiscoSubmit("rating-form", "/api/ratings", function (form) {
  const checked = form.querySelector("input[name=score]:checked");
  document.getElementById("levels").classList.toggle("missing", !checked);
  if (!checked) {
    return { problem: "Please choose a score from 1 to 5." };
  }
  return { payload: { position: Number(form.dataset.position), score: Number(checked.value) } };
});
