// The calculator's one script: start a job for the shown query (verify its plan, or
// simulate a query outside the covered region), follow it, show its report; and say when
// a table is wider than the screen.
"use strict";
(function () {
  // A hint above each table wider than its box ("scroll sideways"), only while it is.
  function markOverflow(box) {
    let hint = box.previousElementSibling;
    if (!hint || !hint.classList.contains("scroll-hint")) {
      hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.textContent = "The table is wider than the screen: scroll it sideways →";
      box.before(hint);
    }
    hint.hidden = box.scrollWidth <= box.clientWidth + 1;
  }

  function markAll() {
    for (const box of document.querySelectorAll(".scroll")) markOverflow(box);
  }

  markAll();
  window.addEventListener("resize", markAll);

  function startJobs(box) {
    const name = box.dataset.name;
    const button = document.getElementById(name + "-button");
    const bar = document.getElementById(name + "-progress");
    const status = document.getElementById(name + "-status");
    const link = document.getElementById(name + "-link");
    const result = document.getElementById(name + "-result");
    if (!button || !bar || !status || !link || !result) return;

    async function showReport(id) {
      const response = await fetch("/jobs/" + id, { credentials: "same-origin" });
      const html = await response.text();
      if (!response.ok) throw new Error(html);
      result.innerHTML = html; // the server's HTML, every value escaped there
      for (const table of result.querySelectorAll(".scroll")) markOverflow(table);
    }

    async function follow(id) {
      const url = "/v1/validations/" + id;
      for (;;) {
        const response = await fetch(url, { credentials: "same-origin" });
        const job = await response.json();
        if (!response.ok) throw new Error(job.error || response.statusText);
        bar.value = job.progress.fraction;
        status.textContent = job.status + (job.progress.last ? " — " + job.progress.last : "") +
          " (" + job.progress.done + "/" + job.progress.total + ")";
        if (job.status === "done") {
          status.textContent = "done";
          await showReport(id);
          return;
        }
        if (["failed", "interrupted", "cancelled"].includes(job.status)) {
          status.textContent = job.status + ": " + (job.error || "");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
    }

    button.addEventListener("click", async () => {
      const query = JSON.parse(box.dataset.query);
      for (const field of ["trials", "seed"]) {
        const input = box.querySelector("#" + field);
        if (input) query[field] = input.value;
      }
      button.disabled = true;
      bar.hidden = false;
      bar.value = 0;
      link.hidden = true;
      result.replaceChildren();
      status.textContent = "starting…";
      try {
        const response = await fetch("/v1/validations", {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(query),
        });
        const job = await response.json();
        if (!response.ok) throw new Error(job.error || response.statusText);
        const anchor = document.createElement("a");
        anchor.href = "/v1/validations/" + job.id;
        anchor.textContent = "job " + job.id;
        link.replaceChildren("Its status: ", anchor);
        link.hidden = false;
        await follow(job.id);
      } catch (error) {
        status.textContent = "error: " + error.message;
      } finally {
        button.disabled = false;
      }
    });
  }

  for (const box of document.querySelectorAll(".job[data-query]")) startJobs(box);
})();
