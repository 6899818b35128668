// The calculator's one script: start a verification job for the shown plan and follow it.
"use strict";
(function () {
  const box = document.getElementById("verify-box");
  const button = document.getElementById("verify-button");
  if (!box || !button) return;
  const bar = document.getElementById("verify-progress");
  const status = document.getElementById("verify-status");
  const result = document.getElementById("verify-result");

  function text(tag, content, cls) {
    const node = document.createElement(tag);
    node.textContent = content;
    if (cls) node.className = cls;
    return node;
  }

  function verdictOf(report) {
    if (typeof report.verdict === "string") return report.verdict;
    if (report.verdict && typeof report.verdict.overall === "string") return report.verdict.overall;
    return report.passed ? "pass" : "fail";
  }

  function familyVerdict(family) {
    if (typeof family.verdict === "string") return family.verdict;
    if (!family.applicable) return "n/a";
    return family.passed ? "pass" : "fail";
  }

  function upperBound(family) {
    const bounds = family.confidence_bounds || family.wilson95;
    return bounds ? bounds[1].toFixed(3) : "—";
  }

  function showReport(report) {
    const verdict = verdictOf(report);
    const line = text("p", "verdict: " + verdict.toUpperCase(), "verdict-" + verdict);
    line.id = "verdict";
    result.replaceChildren(line);
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const name of ["family", "kind", "error rate", "upper bound", "verdict"]) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const family of report.families || []) {
      const row = body.insertRow();
      const cells = [
        family.family,
        family.kind,
        family.error_rate == null ? "—" : family.error_rate.toFixed(3),
        upperBound(family),
        familyVerdict(family),
      ];
      for (const value of cells) row.insertCell().textContent = value;
    }
    const wrap = text("div", "", "scroll");
    wrap.appendChild(table);
    result.appendChild(wrap);
    result.appendChild(
      text("p", "n1 = " + report.n_users_group1.toLocaleString() + ", n2 = " +
        report.n_users_group2.toLocaleString() + ", " + report.trials + " trials/family, seed " +
        report.seed + ", " + report.path + " path", "note"));
    const vote = report.vote_check;
    if (vote) {
      result.appendChild(
        text("p", "a majority vote of " + vote.runs + " runs, checked through one run of " +
          vote.run_n_users_group1.toLocaleString() + " + " +
          vote.run_n_users_group2.toLocaleString() + " users held to error " +
          vote.run_target_error.toFixed(3) + ": error rates and bounds are the vote's",
          "note"));
    }
  }

  async function follow(url) {
    for (;;) {
      const response = await fetch(url, { credentials: "same-origin" });
      const job = await response.json();
      if (!response.ok) throw new Error(job.error || response.statusText);
      bar.value = job.progress.fraction;
      status.textContent = job.status + (job.progress.last ? " — " + job.progress.last : "") +
        " (" + job.progress.done + "/" + job.progress.total + ")";
      if (job.status === "done") {
        status.textContent = "done";
        showReport(job.report);
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
    query.trials = document.getElementById("trials").value;
    query.seed = document.getElementById("seed").value;
    button.disabled = true;
    bar.hidden = false;
    bar.value = 0;
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
      await follow("/v1/validations/" + job.id);
    } catch (error) {
      status.textContent = "error: " + error.message;
    } finally {
      button.disabled = false;
    }
  });
})();
