"""Plans, comparisons, solutions, sweeps, batches and validations as rich tables.

Their JSON documents (``docs/json-schema.md``) are built in :mod:`planner.documents`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# the CLI imports solution_to_dict from here; it is built in planner.documents
from planner.documents import default_over_exact
from planner.documents import solution_to_dict as solution_to_dict
from planner.formulas.settings import asked_key
from planner.inputs import apart_texts, beta_text
from planner.plan import Coverage, Plan, RepetitionMethod


def number_text(value: float | None, digits: int = 4) -> str:
    """A real number as the CLI's tables show it (and the web page, which imports this)."""
    if value is None:
        return "—"
    if abs(value) >= 1e15:  # past the user counts' own range (they are ≤ 10^15 to simulate)
        return f"{value:.{digits}e}"
    if abs(value) >= 10**digits:  # "1,118,034", not "1.1180e+06" beside "5,327,118"
        return f"{value:,.0f}"
    return f"{value:,.{digits}g}"


def messages_per_user_text(value: float) -> str:
    """A group's expected messages per user as every table shows it: two decimals, a
    whole number as itself (a review found "27", "37.9" and "23.88" side by side: four
    significant digits with their trailing zeros dropped, and compare's three)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


@dataclass(frozen=True)
class TableBlock:
    """A table as the CLI prints it: a title on its left, a column per (heading,
    justification), and rows of cell text (rendered by rich, or as rich would by
    ``planner.cli.output.print_blocks``)."""

    title: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class TextBlock:
    """Lines of text beneath a table, in one style (``None``: plain)."""

    lines: tuple[str, ...]
    style: str | None = None


Block = TableBlock | TextBlock


def rich_renderable(block: Block) -> Any:
    """A block as a rich renderable (a table's cells read as rich markup, as before)."""
    if isinstance(block, TextBlock):
        from rich.text import Text

        return Text("\n".join(block.lines), style=block.style or "")
    from rich.table import Table

    table = Table()
    for heading, justify in block.columns:
        table.add_column(heading, justify=justify)  # type: ignore[arg-type]
    for row in block.rows:
        table.add_row(*row)
    return titled(block.title, table)


def titled(title: str, table: Any, caption: str | None = None) -> Any:
    """A table with its title above it and its caption beneath as lines of text, each
    wrapped at the console's width: as a rich table's own title and caption they wrapped
    at the table's, splitting a plan's title mid-phrase ("β =" / "0.3333", a new user's
    review)."""
    from rich.console import Group
    from rich.text import Text

    return Group(Text(title), table, *((Text(caption),) if caption else ()))


def plan_renderables(plan: Plan) -> list[Any]:
    """Rich renderables of one plan: the per-group table and the notes beneath it."""
    return [rich_renderable(block) for block in plan_blocks(plan)]


def plan_blocks(plan: Plan) -> list[Block]:
    """One plan as blocks: the per-group table and the notes beneath it."""
    query = plan.query
    title = (
        f"{query.setting.key}: k = {query.k:,}, α = {query.alpha:g}, "
        f"ε1 = {query.eps1:g}, ε2 = {query.eps2:g}"
        + (f", δ = {float(query.delta)!r}" if query.delta is not None else "")  # as given
        + f", β = {beta_text(query.beta)}"
    )
    columns = [("", "left")]
    models = query.setting.group_models
    for group in plan.groups:
        first = group.name == "group 1"
        asked = query.eps1 if first else query.eps2
        model = f"{models[0 if first else 1].value}, " if query.setting.is_mixed else ""
        columns.append((f"{group.name} ({model}{eps_heading(asked, group.eps)})", "right"))
    rows: list[tuple[str, list[str]]] = [
        ("users needed", [f"{g.n_users:,}" for g in plan.groups]),
        ("homogeneous baseline", [f"{g.baseline_n_users:,}" for g in plan.groups]),
        (
            "saving vs baseline",
            [f"{g.saving_users:,} ({g.saving_fraction:+.1%})" for g in plan.groups],
        ),
    ]
    rows.append(("total n1 + n2", total_cells(plan)))
    if plan.groups[0].noise_mu is not None:
        rows.append(("noise μ per bin", [number_text(g.noise_mu) for g in plan.groups]))
    if any(g.messages_per_user is not None for g in plan.groups):
        rows.append(
            (
                "messages per user",
                [
                    "—"
                    if g.messages_per_user is None
                    else messages_per_user_text(g.messages_per_user)
                    for g in plan.groups
                ],
            )
        )
    # (upper bound)/(lower bound) with C = 1 (JSON ``optimality_gap``) is not shown: neither
    # expression carries its constant, so it read 1 beside a plan 7× its lower bound
    rows.append(("lower bound (C = 1)", [number_text(g.lower_bound) for g in plan.groups]))
    lines = [
        *((f"mechanism: {plan.mechanism}",) if plan.mechanism else ()),
        f"theorem: {plan.reference}   bound: {plan.bound_key}   dominant term: "
        f"{plan.dominant_term}",
        f"constant: {plan.constant_source.value} "
        f"(C = {multiplier_text(plan.constant_multiplier)}, constants {plan.constants_version}); "
        f"coverage: {plan.coverage.value}",
    ]
    line = repetition_line(plan)
    if line:
        lines.append(line)
    if plan.compression is not None:
        c = plan.compression
        lines.append(
            f"domain compression: L = {c.L:,} (exact integer argmin), closed form "
            f"{c.L_closed_form:,.2f}, paper's choice {c.L_paper:,.2f}; "
            f"{c.hashes} hash(es)"
        )
    if plan.alternative_accounting is not None:
        other, n1, n2 = plan.alternative_accounting
        lines.append(f"with {other.value} accounting: n1 = {n1:,}, n2 = {n2:,}")
    blocks: list[Block] = [
        TableBlock(title, tuple(columns), tuple((label, *cells) for label, cells in rows)),
        TextBlock(tuple(lines)),
    ]
    if plan.warnings:
        blocks.append(TextBlock(tuple(f"warning: {w}" for w in plan.warnings), style="yellow"))
    return blocks


def total_cells(plan: Plan) -> list[str]:
    """The plan table's total row (:func:`total_text`)."""
    return total_text(plan.total_users, sum(group.baseline_n_users for group in plan.groups))


def total_text(total: int, baseline: int) -> list[str]:
    """The plan table's total row: n1 + n2, and the homogeneous baseline's total with the
    saving against it (the CLI's table and the web page)."""
    saving = (baseline - total) / baseline if baseline else 0.0
    return [f"{total:,}", f"baseline {baseline:,} ({saving:+.1%})"]


def compare_renderable(
    plans: list[Plan],
    delta: float | None,
    query: Any,
    refused: Sequence[tuple[str, str]] = (),
) -> Any:
    """The settings' plans, cheapest first; then those refused (outside their coverage)."""
    from rich.table import Table

    shown_delta = "—" if delta is None else repr(float(delta))  # δ < 1: never rounded to 1
    title = (
        f"all settings, cheapest first: k = {query.k:,}, α = {query.alpha:g}, "
        f"ε1 = {query.eps1:g}, ε2 = {query.eps2:g}, δ = {shown_delta}, β = {beta_text(query.beta)}"
    )
    table = Table()
    for column in (
        "setting",
        "group 1",
        "group 2",
        "total",
        "baseline total",
        "messages a user",
        "constant",
        "theorem",
    ):
        table.add_column(
            column,
            no_wrap=True,
            justify="left" if column in ("setting", "theorem", "constant") else "right",
        )
    for item in plans:
        baseline = sum(g.baseline_n_users for g in item.groups)
        table.add_row(
            compare_label(item.query.setting.key, item.protocol),
            f"{item.n_users_group1:,}",
            f"{item.n_users_group2:,}",
            f"{item.total_users:,}",
            f"{baseline:,}",
            messages_cell(item),
            item.constant_source.value,
            item.reference,
        )
    for key, _ in refused:
        table.add_row(key, "—", "—", "—", "—", "", "not covered", "")
    captions = [
        f"{compare_label(item.query.setting.key, item.protocol)}: {tester_point_words(item)}"
        for item in plans
        if item.tester_point is not None
    ]
    captions += [f"{key}: {reason}" for key, reason in refused]
    return titled(title, table, "\n".join(captions))


def compare_label(setting: str, protocol: str) -> str:
    """A compare row's name (the CLI's table and the web page): the setting's key, and the
    protocol its plan runs where that is another ("shuffle-private (runs
    shuffle-private+messages)"; the row named "shuffle-private" alone is that protocol's)."""
    return setting if protocol == setting else f"{setting} (runs {protocol})"


def messages_cell(plan: Plan) -> str:
    """A plan's ``messages_text`` (``compare``'s column on the CLI's table)."""
    first, second = plan.query.setting.group_models
    sent = [group.messages_per_user for group in plan.groups]
    return messages_text(sent, (first.value, second.value))


def messages_text(sent: Sequence[float | None], models: Sequence[str]) -> str:
    """Each group's messages per user, "group 1 / group 2" (one figure where they agree),
    for ``compare``'s column (the CLI's table and the web page; a review: a user choosing
    there never saw that the multi-message protocol sends tens of messages a user). A
    local group sends one report a user ("1"); a curator's group sends no counted
    messages ("—")."""
    shown = [
        messages_per_user_text(value) if value is not None else ("1" if model == "local" else "—")
        for value, model in zip(sent, models, strict=True)
    ]
    return shown[0] if len(set(shown)) == 1 else " / ".join(shown)


def multiplier_text(multiplier: float) -> str:
    """A plan's constant C as the CLI shows it (and the web page)."""
    return f"{multiplier:.4g}"


def eps_heading(asked: float, run_at: float) -> str:
    """A group's column heading (the CLI's table and the web page): the asked ε, and where
    its tester runs when that is lower."""
    if asked == run_at:
        return f"ε = {asked:g}"
    run_text, asked_text = apart_texts(run_at, asked, 6)
    return f"ε = {asked_text}, run at {run_text}"


def tester_point_words(plan: Plan) -> str:
    """Where a plan's tester runs below its query, in words ('' when it does not)."""
    point = plan.tester_point
    if point is None:
        return ""
    query = plan.query
    lowered = [  # only what differs from the query: α = the asked α is not "below" it
        f"{name} = {apart_texts(value, asked)[0]}"
        for name, value, asked in (
            ("ε1", point.eps1, query.eps1),
            ("ε2", point.eps2, query.eps2),
            ("α", point.alpha, query.alpha),
        )
        if value != asked
    ]
    if point.delta is not None:  # its mechanism spends less δ than asked
        lowered.append(f"δ = {point.delta:.4g}")
    domain = "" if point.k is None else f"on a domain of k = {point.k:,}"  # larger, not lower
    if not lowered:
        return f"the tester runs {domain} (planner plan says why)" if domain else ""
    if domain:
        return (
            f"the tester runs at {', '.join(lowered)} (below the query), {domain} (above "
            "it; planner plan says why)"
        )
    return f"the tester runs at {', '.join(lowered)} (below the query; planner plan says why)"


def validation_renderable(report: Any) -> Any:
    """Per-family error rates, simultaneous confidence bounds and verdicts."""
    from rich.table import Table

    v = report.verification
    query = report.query
    looks = "" if len(v.schedule) <= 1 else f" (sequential, up to {v.schedule[-1]:,})"
    protocol = report.protocol
    ran = f" (runs {protocol})" if protocol and protocol != query.setting.key else ""
    title = (
        f"validate {query.setting.key}{ran}: n1 = {v.n1:,}, n2 = {v.n2:,}, k = {query.k:,}, "
        f"α = {query.alpha:g}; target error ≤ {beta_text(v.target, 6)}; "
        f"≤ {v.trials:,} trials/family"
        f"{looks}, seed {v.seed}, {v.path.value} path, {v.elapsed_seconds:.2f} s"
    )
    point = report.tester_point
    if point is not None:
        title += (
            f"; the plan's tester runs at ε1 = {point.eps1:g}, ε2 = {point.eps2:g}, "
            f"α = {point.alpha:g}"
            + ("" if point.k is None else f", k = {point.k:,} (the query's k bins and empty ones)")
            + ("" if point.delta is None else f", δ = {point.delta:g} (below the query's)")
            + ", on instances at the query's α"
        )
    sent = report.messages_per_user
    if sent is not None:
        title += (
            f"; each user sends {number_text(sent[0])} (group 1) and {number_text(sent[1])} "
            "(group 2) messages on average"
        )
    if v.vote_runs > 1:
        left_out = (v.n1 % v.vote_runs, v.n2 % v.vote_runs)
        title += (
            f"; a majority vote of {v.vote_runs} runs, checked through one run of "
            f"{v.n1 // v.vote_runs:,} + {v.n2 // v.vote_runs:,} users held to error "
            f"{v.run_target:.4g}: trials and the run error are that run's, the error and "
            "its bounds the vote's"
            + (
                f" ({left_out[0]:,} + {left_out[1]:,} users left over take no part)"
                if any(left_out)
                else ""
            )
        )
    table = Table()
    bounds = f"bounds (each {v.confidence:.0%} joint)"
    vote = v.vote_runs > 1  # one run simulated: its own error beside the vote's
    columns = ("family", "kind", "TV", "trials", *(("run error",) if vote else ()), "error")
    for column in (*columns, bounds, "verdict"):
        table.add_column(
            column,
            justify="left" if column in ("family", "kind") else "right",
            no_wrap=column in ("verdict", bounds),
        )
    for o in v.outcomes:
        if not o.applicable:
            table.add_row(o.family, o.kind, *["—"] * (len(columns) - 1), "n/a at this α")
            continue
        table.add_row(
            o.family,
            o.kind,
            f"{o.tv:.4g}",
            f"{o.trials:,}",
            *((rate_text(o.run_error_rate),) if vote else ()),
            rate_text(o.error_rate),
            f"[{rate_text(o.ci_low, 'down')}, {rate_text(o.ci_high, 'up')}]",
            o.verdict.value.upper() if o.verdict.value == "fail" else o.verdict.value,
        )
    return titled(title, table, verdict_line(v))


def rate_text(value: float, rounding: str = "nearest") -> str:
    """An error rate to three decimals, or to two significant digits below 0.01 (a vote's
    error may be far smaller than any trial count shows, yet not 0). ``rounding``:
    ``nearest``, or ``up`` / ``down`` for an upper / lower confidence bound, which must
    not be shown tighter than it is."""
    if value <= 0.0:
        return "0.000"
    step = 0.001 if value >= 0.01 else 10.0 ** (math.floor(math.log10(value)) - 1)
    scaled = value / step
    if rounding == "up":
        scaled = math.ceil(scaled - 1e-9)  # a bound already on the grid stays there
    elif rounding == "down":
        scaled = math.floor(scaled + 1e-9)
    else:
        scaled = round(scaled)
    shown = min(scaled * step, 1.0)
    return f"{shown:.3f}" if step == 0.001 or shown >= 0.01 else f"{shown:.2g}"


def verdict_line(v: Any) -> str:
    """The overall verdict in words, with what would decide an inconclusive one."""
    joint = f"jointly at {v.confidence:.0%} over families and looks"
    verdict = v.verdict.value
    if verdict == "pass":
        shown = beta_text(v.target, 6)
        left_out = [o for o in v.outcomes if not o.applicable]
        if not left_out:
            return f"verdict: PASS — every family's error is certified ≤ {shown} ({joint})"
        # a new user's review: a PASS resting on one far pair of six had said "every
        # family", which an auditor reads as power certified on all alternatives
        run = len(v.outcomes) - len(left_out)
        counts = {
            kind: sum(1 for o in left_out if o.kind == kind)
            for kind in dict.fromkeys(o.kind for o in left_out)
        }
        kinds = (
            f"all {next(iter(counts))}"
            if len(counts) == 1
            else ", ".join(f"{count} {kind}" for kind, count in counts.items())
        )
        return (
            f"verdict: PASS — each of the {run} families run is certified ≤ {shown} "
            f"({joint}); {len(left_out)} of the {len(v.outcomes)} families ({kinds}) cannot "
            "be built at this k and α (n/a) and certify nothing"
        )
    if verdict == "fail":
        failed = ", ".join(o.family for o in v.outcomes if o.verdict.value == "fail")
        return f"verdict: FAIL — shown above {beta_text(v.target, 6)} ({joint}): {failed}"
    open_ = [o for o in v.outcomes if o.applicable and o.verdict.value == "inconclusive"]
    needs = [o.trials_to_decide for o in open_]
    more = (
        "no trial count decides a family whose error sits on the target"
        if any(n is None for n in needs)
        else f"about {max(n for n in needs if n is not None):,} trials per family would decide"
    )
    return (
        f"verdict: INCONCLUSIVE — {', '.join(o.family for o in open_)} neither certified "
        f"nor shown above {beta_text(v.target, 6)} ({joint}); {more}"
    )


def repetition_line(plan: Plan) -> str | None:
    """How β < 1/3 is met and what the other way costs (README, β)."""
    rep = plan.repetition
    if rep.method is RepetitionMethod.NONE:
        return None
    vote = (
        f"majority vote over {rep.vote_runs} runs on disjoint users (exact binomial, per-run "
        "error 1/3)"
    )
    other = "?" if rep.other_total_users is None else f"{rep.other_total_users:,}"
    other += " users in all"
    if plan.tester_point is not None:  # the other way at the tester's point, like its C
        other += " at the tester's point"
    if rep.method is RepetitionMethod.DIRECT_VOTE:
        return (
            f"target β: majority vote over {rep.runs} runs on disjoint users, each calibrated "
            f"directly at β = {rep.run_beta:g} (exact binomial; the C above is each run's: "
            f"one run's C at β = 1/3 × {rep.factor:.3g}, planner calibrate --direct); a {vote} "
            f"would need {other}"
        )
    if rep.method is RepetitionMethod.DIRECT and plan.coverage is Coverage.SIMULATED:
        return "target β: one run simulated at β (its own search, held to the operating point)"
    if rep.method is RepetitionMethod.DIRECT:
        return (
            f"target β: one run calibrated directly at β (the C above is one run's C at "
            f"β = 1/3 × {rep.factor:.3g}, planner calibrate --direct); a {vote} would need "
            f"{other}"
        )
    if rep.direct_factor is None:
        why = rep.direct_unavailable or "not calibrated here"
        return f"target β: {vote}; no direct calibration: {why} (--exact tries it for this query)"
    return (
        f"target β: {vote}; direct calibration (one run's C × {rep.direct_factor:.3g}) would need "
        f"{other}"
    )


EXACT_TRIALS_ADVISED = 1000
"""Below this many trials per family an exact search says its sizes are noisy: one that
finds nothing, that more trials may find a plan (a review: local k = 4, α = 0.3, ε = 8
found none at 100 trials, where the default plan passes validation); one that finds
sizes, that they are not to be run as they are (shuffle k = 50, α = 0.3, ε = (1, 0.25):
1,620 + 3,791 at 100 trials, 389 + 911 at 300)."""


def exact_renderable(exact: Any, default: Plan) -> Any:
    from rich.text import Text

    if exact.plan is None:
        floor = (
            f"; at β < 1/3 a tester whose constants are tuned for 1/3 can have an error floor "
            f"above {exact.target:.3g} — the default plan still meets β (its 'target β' line)"
            if exact.query.beta < 1 / 3
            else ""
        )
        few = (
            f"; at {exact.trials} trials a family's observed error is noisy enough to fail "
            "every multiplier near the target: more --trials may find one"
            if exact.trials < EXACT_TRIALS_ADVISED
            else ""
        )
        return Text(
            "exact search: no multiplier in the search range met the target on every family"
            + floor
            + few,
            style="red",
        )
    found, worst = exact.plan, exact.worst
    # the protocol searched is named where it is not the asked setting's own
    ran = "" if found.protocol == default.query.setting.key else f", the {found.protocol} protocol"
    where = "this query"
    if default.tester_point is not None:
        at = default.tester_point
        eps1, eps2 = (
            apart_texts(value, asked)[0]
            for value, asked in ((at.eps1, default.query.eps1), (at.eps2, default.query.eps2))
        )
        where = f"the plan's tester point ε1 = {eps1}, ε2 = {eps2}, α = {at.alpha:g}"
        if at.k is not None:
            where += f", on a domain of k = {at.k:,}"
    return Text(
        f"exact search ({where}{ran}, {exact.trials} trials/family, seed {exact.seed}): "
        f"n1 = {found.n_users_group1:,}, n2 = {found.n_users_group2:,} — {exact.confidence} "
        f"(worst: {worst.family}, {worst.error_rate:.3f}, 95% CI [{worst.ci_low:.3f}, "
        f"{worst.ci_high:.3f}]); default/exact = {default_over_exact(default, found):.2f} "
        f"(group 1{_split_compared(default)})"
        + (
            f"; at {exact.trials} trials a search's sizes are noisy: --trials "
            f"{EXACT_TRIALS_ADVISED} or more before running them"
            if exact.trials < EXACT_TRIALS_ADVISED
            else ""
        )
    )


def _split_compared(default: Plan) -> str:
    """Words for a default plan split by the tester's variance: the ratio compares the
    paper's split of both (the search sizes that one), not the printed sizes."""
    if default.paper_split_users is None:
        return ""
    return (
        ", both by the paper's split n_g ∝ γ_g², which the search sizes; the default plan's "
        f"split by variance needs {default.total_users:,} in all"
    )


def allocation_renderable(allocation: Any, plan: Plan) -> Any:
    from rich.text import Text

    if not allocation.feasible:
        return Text(
            f"allocation {allocation.rule.value}: infeasible — {allocation.reason}", style="red"
        )
    from planner.allocation import PAPER_RULE

    sizes = f"n1 = {allocation.n_users_group1:,}, n2 = {allocation.n_users_group2:,}"
    check = f"planner validate --allocation {allocation.rule.value}"
    if allocation.rule.value == "fixed-n2":
        sizes += " (n2 as given)"
        check += f" --n2 {allocation.n_users_group2}"
    else:
        paper_cost = allocation.cost1 * plan.n_users_group1 + allocation.cost2 * plan.n_users_group2
        cents = any(v != round(v) and v < 1e4 for v in (allocation.cost, paper_cost))
        shown = [f"{v:,.2f}" if cents else f"{v:,.0f}" for v in (allocation.cost, paper_cost)]
        sizes += f", cost {shown[0]} (the paper's rule: {shown[1]})"
    how = allocation.reason
    if allocation.reason == PAPER_RULE:
        own = allocation.n_users_group2 == plan.n_users_group2
        how = (
            "the paper's rule's own sizes"
            if own
            else f"the paper's rule's n1 (for its n2 = {plan.n_users_group2:,})"
        )
    return Text(f"allocation {allocation.rule.value}: {sizes}; {how}; check it with {check}")


def _count(value: Any) -> str:
    return "—" if value is None else f"{value:,}"


def _rows_table(
    title: str, headers: list[str], rows: list[list[str]], caption: str | None = None
) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD)
    for header in headers:
        table.add_column(
            header, justify="left" if header in ("setting", "name", "status") else "right"
        )
    for row in rows:
        table.add_row(*row)
    return titled(title, table, caption)


def sweep_renderable(result: Any) -> Any:
    """A sweep as a table: the setting, the varied inputs, status and users per group, the
    tester runs when some row is a majority vote (a row at β < 1/3 below the direct
    points' k: the vote's jump shows), and where the tester runs when some row's runs
    below its inputs (``tester_point``)."""
    rows = result.rows()
    votes = any((row["runs"] or 1) > 1 for row in rows)
    lowered = any(row["tester_eps1"] is not None for row in rows)
    domains = any(row["tester_k"] is not None for row in rows)
    messages = any(_sends_messages(row) for row in rows)
    shown = [
        [
            row["setting"]
            if row["protocol"] in (None, row["setting"])
            else f"{row['setting']} (runs {row['protocol']})",
            *("—" if row[name] is None else f"{row[name]:g}" for name in result.varied),
            row["status"],
            _count(row["n_users_group1"]),
            _count(row["n_users_group2"]),
            _count(row["total_users"]),
            *(["—" if row["runs"] is None else f"{row['runs']}"] if votes else []),
            *([_messages_cell(row)] if messages else []),
            *([_tester_cell(row)] if lowered else []),
        ]
        for row in rows
    ]
    count = f"{len(result):,} plan{'' if len(result) == 1 else 's'}"
    title = (
        f"sweep over {', '.join(result.varied)}: {count}"
        if result.varied
        else f"sweep over no parameter (each given one value): {count}"
    )
    return _rows_table(
        title,
        [
            "setting",
            *result.varied,
            "status",
            "group 1",
            "group 2",
            "total",
            *(["runs"] if votes else []),
            *(["messages a user"] if messages else []),
            *([f"tester at (ε1, ε2, α{', k' if domains else ''})"] if lowered else []),
        ],
        shown,
        "\n".join(f"note: {line}" for line in result.notes),
    )


def _messages_cell(row: dict[str, Any]) -> str:
    """Each group's expected messages per user, group 1's first ("" where each user sends
    one report; a sweep's or a batch's row)."""
    if not _sends_messages(row):
        return ""
    return " / ".join(
        "—" if row[key] is None else messages_per_user_text(row[key])
        for key in (f"messages_per_user_group{g}" for g in (1, 2))
    )


def _tester_cell(row: dict[str, Any]) -> str:
    """Where a sweep row's tester runs below its inputs ("—": at them)."""
    if row["tester_eps1"] is None:
        return "—"
    eps1, eps2 = (  # told apart from the row's own ε where they differ in the last shown digit
        apart_texts(row[f"tester_{name}"], row[name])[0] for name in ("eps1", "eps2")
    )
    cell = f"{eps1}, {eps2}, {row['tester_alpha']:g}"
    if row["tester_k"] is not None:
        cell += f", k = {row['tester_k']:,}"
    if row.get("tester_delta") is not None:  # its mechanism spends less δ than the row's
        cell += f", δ = {row['tester_delta']:g}"
    return cell


def _asked_setting(row: dict[str, Any]) -> str:
    """The setting a scenario asked for, as its key ("central" has no coin)."""
    return asked_key(str(row["model"] or "").lower(), row["coin"] or "private")


def _sends_messages(row: dict[str, Any]) -> bool:
    """A batch row whose plan's users send several messages each (group 1's, group 2's)."""
    return row.get("messages_per_user_group1") is not None


def batch_renderable(rows: list[dict[str, Any]]) -> Any:
    """A batch as a table: each scenario's name, kind, status and answer."""
    shown = []
    for number, row in enumerate(rows, start=1):
        solved = "" if row["solved_for"] is None else f"{row['solved_for']} = "
        value = row["solved_value"]
        shown.append(
            [
                str(row["name"] or number),
                f"{row['kind']} {row['protocol'] or _asked_setting(row)}",
                row["status"],
                solved
                + (
                    ""
                    if value is None
                    else f"{value:,}"
                    if isinstance(value, int)
                    else f"{value:.6g}"
                ),
                _count(row["n_users_group1"]),
                _count(row["n_users_group2"]),
            ]
        )
    headers = ["name", "query", "status", "solved", "group 1", "group 2"]
    if any(_sends_messages(row) for row in rows):  # a shuffle plan: what each user sends
        headers += ["messages a user"]
        for line, row in zip(shown, rows, strict=True):
            line.append(_messages_cell(row))
    if rows and "verdict" in rows[0]:  # planner batch --validate
        headers += ["verdict", "worst error"]
        for line, row in zip(shown, rows, strict=True):
            worst = row["worst_error_rate"]
            line += [row["verdict"] or "", "" if worst is None else f"{worst:.3f}"]
    count = f"{len(rows)} scenario{'' if len(rows) == 1 else 's'}"
    return _rows_table(f"batch: {count}", headers, shown)
