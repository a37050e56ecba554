// The play page's reply for POST /api/play (see submit.js): the participant's text; the server answers with the
// same dialogue's page, which then shows the assistant's next question or its answer.
"use strict";
window.prefdiscoSubmit("reply-form", "/api/play", function (form) {
  const text = document.getElementById("reply").value.trim();
  if (!text) {
    return { problem: "Please write a reply." };
  }
  const button = document.getElementById("submit");
  button.textContent = "Waiting for the assistant…";
  return { payload: { position: Number(form.dataset.position), reply: text } };
});
