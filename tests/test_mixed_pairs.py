"""Mixed pairs: each group under its own model (``--model local,central``).

What is checked: the query's spelling and its refusals; the mixed bound's split against a
numerical minimisation; the curator's noise in the statistic's spread (a Monte Carlo
null error with and without it, fixed seeds); the trust order (a mixed plan never needs
more users in all than both groups under the less trusted model, at random queries over
the accepted range); the mirror (group 1 with the smaller ε is the same plan, groups
exchanged); each group's release is its own model's mechanism; and the same numbers
from the API, the CLI, HTTP and the page.
"""

from __future__ import annotations

import json
import math
import random
import re

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from planner import Query, Setting
from planner.api import MIXED_SETTING_KEYS, compare_document, plan_document
from planner.cli import main
from planner.constants import default_constants
from planner.formulas.bounds import (
    channel_noise,
    curator_beside_curator,
    curator_beside_local,
    curator_noise_variance,
    local_beside_curator,
)
from planner.formulas.errors import InputError
from planner.formulas.settings import Model, parse_models
from planner.plan import Coverage, mixed_runs, plan
from planner.validators.curator_histogram import HistogramChannel, noise_fourth_cumulant
from planner.validators.engine import verify
from planner.validators.local_channels import best_channel
from planner.validators.mixed_channels import MixedChannelsTester


def test_a_mixed_setting_has_a_key_that_reads_back() -> None:
    setting = Setting("local", "public", model2="central")
    assert setting.key == "local/central-public"
    assert Setting.from_key(setting.key) == setting
    assert setting.group_models == (Model.LOCAL, Model.CENTRAL)
    assert setting.less_trusted is Model.LOCAL and not setting.needs_delta
    # the coin stays: it is the local group's
    assert Setting("central", "public", model2="local").coin.value == "public"
    # the same model twice is that model; central alone ignores the coin as before
    assert Setting("central", "public", model2="central") == Setting("central", "private")
    assert Setting("shuffle", "private", model2="central").needs_delta
    protocol = Setting("central", "private", "channels", model2="local")
    assert Setting.from_key(protocol.key) == protocol
    assert len(MIXED_SETTING_KEYS) == 12  # 6 ordered pairs × 2 coins


@pytest.mark.parametrize(
    ("text", "models"),
    [
        ("local", (Model.LOCAL, None)),
        ("local,central", (Model.LOCAL, Model.CENTRAL)),
        (" Shuffle , LOCAL ", (Model.SHUFFLE, Model.LOCAL)),
        ("central/shuffle", (Model.CENTRAL, Model.SHUFFLE)),
        ("central,central", (Model.CENTRAL, None)),
    ],
)
def test_the_models_are_read_as_written(text: str, models: tuple) -> None:
    assert parse_models(text) == models


@pytest.mark.parametrize(
    "text",
    ["local,", ",central", "local,central,shuffle", "local;central", "x" * 100, 10**5000],
    ids=["trailing", "leading", "three", "semicolon", "long", "huge-int"],
)
def test_a_bad_pair_is_one_line_naming_model(text: object) -> None:
    with pytest.raises(InputError, match=r"^invalid model = .*: must be one of local, shuffle"):
        Query.build(text, "private", 100, 0.1, 1, 1)


def _release(k: int, eps: float, curator: bool) -> tuple[float, float]:
    """A release's (w, c): times k, each bin's variance near the uniform p is w/n + c/n²
    (a local channel: w its noise, c = 0; a curator's histogram: w = 1, c = k·v)."""
    if curator:
        return 1.0, k * float(curator_noise_variance(eps))
    return float(channel_noise(k, eps)), 0.0


@pytest.mark.parametrize(
    ("bound1", "curator1", "bound2", "curator2"),
    [
        (local_beside_curator, False, curator_beside_local, True),
        (curator_beside_curator, True, curator_beside_curator, True),
    ],
    ids=["local-and-curator", "two-curators"],
)
def test_the_closed_form_split_is_within_one_percent_of_the_fewest_users(
    bound1, curator1: bool, bound2, curator2: bool
) -> None:
    """Both groups' C = 1 users against a numerical minimisation of n1 + n2 subject to
    Σ_g (w_g/n_g + c_g/n_g²) = α²/√k (docs/method.md, "Mixed pairs"; the central model's
    histogram tester is the pair of two curators)."""
    worst = 1.0
    for k in (2, 16, 1000, 10**5):
        for alpha in (0.01, 0.2, 0.9):
            for eps1 in (0.05, 1.0, 20.0):
                for eps2 in (0.05, 1.0, 20.0):
                    (w1, c1), (w2, c2) = _release(k, eps1, curator1), _release(k, eps2, curator2)
                    tau = alpha**2 / math.sqrt(k)

                    def users(w: float, c: float, share: float) -> float:
                        return (w + math.sqrt(w * w + 4 * c * share)) / (2 * share)

                    def total(s: float, w1=w1, c1=c1, w2=w2, c2=c2, tau=tau) -> float:
                        return users(w1, c1, tau * s) + users(w2, c2, tau * (1 - s))

                    least = minimize_scalar(
                        total, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12}
                    ).fun
                    ours = bound1(k, alpha, eps1, eps2)[0] + bound2(k, alpha, eps2, eps1)[0]
                    assert ours >= least * (1 - 1e-9)
                    worst = max(worst, ours / least)
    assert worst <= 1.01


def test_a_noiseless_curator_is_a_channel_of_noise_one() -> None:
    """With v → 0 (ε = 60) the split is the channels' √w_g(√w1 + √w2)·√k/α² with w_C = 1."""
    k, alpha, eps_local = 500, 0.2, 0.7
    w = float(channel_noise(k, eps_local))
    order = math.sqrt(k) / alpha**2
    local = local_beside_curator(k, alpha, eps_local, 60.0)[0]
    curator = curator_beside_local(k, alpha, 60.0, eps_local)[0]
    assert local == pytest.approx(math.sqrt(w) * (math.sqrt(w) + 1) * order, rel=1e-9)
    assert curator == pytest.approx((math.sqrt(w) + 1) * order, rel=1e-9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_the_noise_fourth_cumulant_is_the_two_sided_geometric_s(eps: float) -> None:
    """κ4 from the pmf itself, summed far into both tails."""
    ratio = math.exp(-eps / 2)
    values = np.arange(-20_000, 20_001, dtype=np.float64)
    pmf = (1 - ratio) / (1 + ratio) * ratio ** np.abs(values)
    second = float(np.sum(pmf * values**2))
    fourth = float(np.sum(pmf * values**4))
    assert noise_fourth_cumulant(eps) == pytest.approx(fourth - 3 * second**2, rel=1e-9)
    assert HistogramChannel(8, eps).noise_fourth_cumulant(10) == pytest.approx(
        noise_fourth_cumulant(eps) / 1e4
    )
    assert best_channel(8, eps).noise_fourth_cumulant(10) == 0.0


def _null_errors(monkeypatch: pytest.MonkeyPatch | None) -> list[float]:
    if monkeypatch is not None:
        monkeypatch.setattr(HistogramChannel, "noise_fourth_cumulant", lambda self, n: 0.0)
    tester = MixedChannelsTester(1024, 0.3, 20.0, 0.5, model1="local", model2="central")
    result = verify(
        tester, 1024, 0.3, 3000, 600, trials=2000, seed=5, target=1 / 3,
        families=("uniform", "zipf-1"), stop_early=False,
    )  # fmt: skip
    return [outcome.error_rate for outcome in result.outcomes]


def test_the_curator_s_noise_tails_are_in_the_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the curator's noise dominates (k = 1,024, ε = (20, 0.5), 3,000 + 600 users) the
    null error is the normal tail at κ = 0.7, 0.242 (2,000 trials: ± 0.03 at 3 standard
    errors); without κ4 in σ̂ the threshold is √2.5 too low and it errs above 0.30."""
    assert max(_null_errors(None)) <= 0.242 + 0.03
    assert min(_null_errors(monkeypatch)) >= 0.30


def _random_mixed_queries(count: int, seed: int) -> list[Query]:
    rng = random.Random(seed)
    pairs = [(a, b) for a in Model for b in Model if a is not b]
    queries = []
    for _ in range(count):
        first, second = rng.choice(pairs)
        coin = rng.choice(("private", "public"))
        shuffle = Model.SHUFFLE in (first, second)
        queries.append(
            Query.build(
                f"{first.value},{second.value}",
                coin,
                int(10 ** rng.uniform(math.log10(2), 5)),
                10 ** rng.uniform(-2, 0),
                10 ** rng.uniform(math.log10(0.05), math.log10(20)),
                10 ** rng.uniform(math.log10(0.05), math.log10(20)),
                10 ** rng.uniform(-10, -4) if shuffle else None,
            )
        )
    return queries


def test_a_mixed_plan_never_needs_more_users_than_the_less_trusted_model_s() -> None:
    """60 random queries over every pair, both coins and the accepted range."""
    weighed = 0
    for query in _random_mixed_queries(60, 3):
        made = plan(query)
        less = plan(mixed_runs(query)[0])
        assert mixed_runs(query)[0].setting.model is query.setting.less_trusted
        if less.coverage is not Coverage.EXTRAPOLATED:
            assert made.total_users <= less.total_users, query
            weighed += 1
        assert made.query == query
    assert weighed >= 40


def test_the_mirror_is_the_same_plan_with_the_groups_exchanged() -> None:
    query = Query.build("local,central", "private", 300, 0.2, 0.5, 2.0)
    mirror = Query.build("central,local", "private", 300, 0.2, 2.0, 0.5)
    made, other = plan(query), plan(mirror)
    assert (made.n_users_group1, made.n_users_group2) == (
        other.n_users_group2,
        other.n_users_group1,
    )
    assert [group.name for group in made.groups] == ["group 1", "group 2"]
    # each group's ε as asked, the curator's run at it or below (a tester point: since the
    # k nodes 256 and 512 it runs at 0.5, 1,065,688 users in all against 1,100,890)
    assert (made.query.eps1, made.query.eps2) == (0.5, 2.0)
    assert made.groups[0].eps == 0.5 and made.groups[1].eps <= 2.0
    assert (other.groups[0].eps, other.groups[1].eps) == (made.groups[1].eps, 0.5)


def test_each_group_releases_through_its_own_models_mechanism() -> None:
    """The plan's tester: the local group's channel is its best local randomizer (exactly
    ε-LDP: tests/test_channels.py), the curator's a discrete Laplace histogram (exactly
    ε-DP: tests/test_curator_baseline.py), each at its own ε; no δ is spent."""
    assert default_constants().has_setting("central/local-private+channels")
    query = Query.build("local,central", "private", 1000, 0.1, 1.0, 1.0)
    made = plan(query)
    assert Setting.from_key(made.protocol).is_mixed, made.protocol
    tester = made.tester_query
    from planner.testers import build_tester

    built = build_tester(tester)
    local, curator = built.channels
    assert local == best_channel(tester.k, tester.eps1)  # its domain: 1,000 bins or more
    assert curator == HistogramChannel(tester.k, tester.eps2)
    assert made.query.delta is None


def _cli_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_the_cli_http_and_page_give_the_api_s_numbers(capsys, tmp_path) -> None:
    from fastapi.testclient import TestClient

    from planner.service import create_app

    query = {"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 2}
    document = plan_document(model="local,central", **query)
    flags = [f for name, value in query.items() for f in (f"--{name}", str(value))]
    assert _cli_json(["plan", "--model", "local,central", *flags, "--json"], capsys) == document
    assert document["inputs"]["model"] == "local,central"
    assert [group["model"] for group in document["groups"]] == ["local", "central"]
    compared = compare_document(model="local,central", **query)
    assert _cli_json(["compare", "--model", "local,central", *flags, "--json"], capsys) == compared
    rows: dict[str, int] = {}  # each setting's plan (its own protocol alone may follow)
    for row in compared["plans"]:
        rows.setdefault(row["setting"], row["total_users"])
    assert rows["local/central-private"] == document["total_users"]
    app = create_app(tmp_path / "jobs.sqlite3", workers=1, run_jobs=False)
    with TestClient(app) as client:
        assert client.post("/v1/plan", json={"model": "local,central", **query}).json() == document
        answer = client.post("/v1/compare", json={"model": "local,central", **query}).json()
        assert answer == compared
        page = client.get("/", params={**query, "setting": "local/central-private"})
        assert page.status_code == 200
        users = re.findall(r'data-field="users"[^>]*>([\d,]+)<', page.text)
        assert [int(value.replace(",", "")) for value in users] == [
            group["n_users"] for group in document["groups"]
        ]


def test_the_shuffle_group_of_a_mixed_pair_needs_delta() -> None:
    with pytest.raises(InputError, match="delta"):
        Query.build("shuffle,central", "private", 100, 0.1, 1, 1)
    query = Query.build("shuffle,central", "private", 100, 0.1, 1, 1, 1e-6)
    assert query.delta == 1e-6
    local = Query.build("local,central", "private", 100, 0.1, 1, 1, 1e-6)
    assert local.delta is None and any("pure ε-DP" in line for line in local.warnings)


# A hostile review's findings (2026-11-29), each a reproducer ------------------------


@pytest.mark.parametrize("key", ["local/shuffle-private", "central/shuffle-public"])
def test_a_mixed_sweep_with_a_shuffle_group_plans_its_rows(key: str) -> None:
    """It raised KeyError (the δ search looked up the pair as a protocol)."""
    from planner.api import sweep_result

    rows = sweep_result(settings=[key], k=100, alpha=0.2, eps1=1, eps2=[0.5, 1], delta=1e-6).rows()
    assert [row["status"] for row in rows] == ["ok", "ok"]
    for row in rows:
        query = Query.build(key.split("-")[0], key.split("-")[1], 100, 0.2, 1, row["eps2"], 1e-6)
        assert row["total_users"] == plan(query).total_users


def test_a_mixed_sweep_says_why_its_rows_are_capped() -> None:
    from planner.api import sweep_result

    with pytest.raises(InputError, match="rows a mixed pair"):
        sweep_result(
            settings=["local/central-private"], k=1000, alpha=0.1, eps1=1, eps2="0.05:5:600log"
        )


@pytest.mark.parametrize(("eps1", "eps2"), [(0.5, 2.0), (2.0, 0.5), (1.0, 1.0)])
def test_a_c_set_for_a_mixed_protocol_sizes_it_whichever_group_is_stronger(eps1, eps2) -> None:
    """A search sets one C (``table_with``); a mixed plan whose group 2 has the larger ε
    runs as its mirror and reads the mirrored key's C, so with one key set the search had
    bisected a C no size read (k = 128, α = 0.2, ε = (0.5, 2): 304,865 + 6,866 at every
    C). Doubling C doubles both groups' users, in either naming."""
    from planner.calibration.search import table_with
    from planner.formulas.settings import Coin

    setting = Setting("local", Coin.PRIVATE, "channels", model2="central")
    query = Query(setting, 128, 0.2, eps1, eps2)
    low, high = (
        plan(query, table_with(setting.key, multiplier), fallback=False)
        for multiplier in (0.2, 0.4)
    )
    for small, large in zip(low.groups, high.groups, strict=True):
        assert large.n_users == pytest.approx(2 * small.n_users, abs=2)


def test_exact_searches_a_mixed_pair_named_either_way(capsys) -> None:
    """``--exact`` had been refused for a mixed pair; it searches the protocol the pair's
    plan runs, the local group's ε the smaller (a mirrored run) included."""
    for models, eps1, eps2 in (("central,local", "2", "1"), ("local,central", "1", "2")):
        code = main(["plan", "-m", models, "-k", "20", "-a", "0.5", "--eps1", eps1,
                     "--eps2", eps2, "--exact", "--trials", "200", "--json"])  # fmt: skip
        captured = capsys.readouterr()
        assert code == 0, captured.err
        exact = json.loads(captured.out)["exact"]
        assert exact["found"] and exact["protocol"].endswith("-private+channels")
        assert exact["worst_error_rate"] <= exact["target_error"]
        assert exact["n_users_group1"] > 0 and exact["n_users_group2"] > 0


def test_exact_is_refused_in_one_line_where_the_plan_is_a_vote(capsys) -> None:
    """A review: below β = 1/3 a mixed protocol's plan is a majority vote (no direct
    calibration), while ``--exact`` sizes one run held to β: it printed 5,815 + 39,383
    users beside the vote's 40,860 + 276,735 ("default/exact = 7.03") and claimed that
    planner validate certifies them, which failed them (it runs the vote)."""
    code = main(["plan", "-m", "central,local", "-k", "128", "-a", "0.2", "--eps1", "0.5",
                 "--eps2", "2", "--beta", "0.1", "--exact", "--trials", "300"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2 and captured.err.startswith("error: invalid exact")
    assert "majority vote of 15 runs" in captured.err and captured.err.count("\n") == 1


def test_exact_plan_names_the_setting_of_a_mixed_pair_s_query() -> None:
    """``planner.exact.exact_plan`` on a mixed pair's own query (not the protocol its plan
    runs) raised a bare ``KeyError`` from the search's table (a review)."""
    from planner.exact import exact_plan

    query = Query.build("local,central", "private", 64, 0.3, 0.5, 2.0, None)
    with pytest.raises(InputError, match="invalid setting = 'local/central-private'"):
        exact_plan(query, trials=200)


def test_a_service_job_outside_the_covered_region_is_refused_not_a_500(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from planner.service import create_app

    body = {"model": "local/central", "coin": "public", "k": "150000", "alpha": "0.5",
            "eps1": "2", "eps2": "1", "allocation": "fewest", "kind": "plan"}  # fmt: skip
    with TestClient(create_app(tmp_path / "jobs.sqlite3", run_jobs=False)) as client:
        response = client.post("/v1/validations", json=body)
        assert response.status_code == 422, response.text
        assert response.json()["error"].startswith("not covered for local/central-public")


def test_a_power_curve_of_a_mechanism_plots_that_mechanism() -> None:
    """``plot --power -s local-private+k-rr`` had drawn the local-private curve."""
    from planner.power import settings_curves

    for key in ("local-private+k-rr", "local/central-private"):
        [(query, _)] = settings_curves([key], k=100, alpha=0.2, eps1=1, eps2=0.5, users=1000)
        assert query.setting.key == key


def test_explain_refuses_a_pair_with_the_one_model_line(capsys) -> None:
    from planner.api import explain_document

    with pytest.raises(InputError, match=r"explain shows one model's bounds"):
        explain_document("local,central")
    assert explain_document(" LOCAL ")["setting"] == "local-private"


def test_the_less_trusted_plan_says_why_no_mixed_protocol_ran() -> None:
    shuffle = plan(Query.build("local,shuffle", "private", 100, 0.2, 1, 0.5, 1e-6))
    assert any("no mixed protocol serves this pair yet" in line for line in shuffle.warnings)
    far = plan(Query.build("local,central", "private", 150_000, 0.5, 2, 1))
    assert not Setting.from_key(far.protocol).is_mixed
    assert any("the mixed protocol was not weighed" in line for line in far.warnings)


def test_each_group_s_lower_bound_is_its_own_model_s() -> None:
    from planner.formulas.registry import BOUNDS

    made = plan(Query.build("local,central", "private", 1000, 0.1, 1, 0.5))
    central = BOUNDS["lower-central"].evaluate(k=1000, alpha=0.1, eps=0.5)
    local = BOUNDS["lower-local-private"].evaluate(k=1000, alpha=0.1, eps=1.0)
    assert made.groups[0].lower_bound == pytest.approx(local)
    assert made.groups[1].lower_bound == pytest.approx(central)


def test_compare_leaves_a_shuffle_pair_out_without_delta_and_wants_two_models() -> None:
    document = compare_document(model="central,shuffle", k=100, alpha=0.2, eps1=1, eps2=0.5)
    assert not any("/" in row["setting"] for row in document["plans"])
    with pytest.raises(InputError, match="two models joined by a comma"):
        compare_document(model="local", k=100, alpha=0.2, eps1=1, eps2=0.5)


def test_a_batch_row_names_its_pair_by_key() -> None:
    from planner.formulas.settings import asked_key

    assert asked_key("central,shuffle", "private") == "central/shuffle-private"
    assert asked_key("bogus,x", "private") == "bogus,x-private"


def test_a_mirrored_line_names_the_groups_back() -> None:
    from planner.plan import _named_back

    line = "group 1 needs more (γ1 = 2, ε1 = 0.5, n1 = 10); group 2 less (γ2, eps2, n2)"
    assert _named_back(line) == (
        "group 2 needs more (γ2 = 2, ε2 = 0.5, n2 = 10); group 1 less (γ1, eps1, n1)"
    )


@pytest.mark.parametrize(
    ("query", "protocol", "models"),
    [
        (
            {"model": "central,local", "k": 16, "alpha": 0.6, "eps1": 4, "eps2": 2},
            "central/local-private+channels",
            ("central", "local"),
        ),
        (  # the central model's histogram tester: two curators
            {"model": "central", "k": 16, "alpha": 0.3, "eps1": 5, "eps2": 5},
            "central+channels",
            ("central", "central"),
        ),
    ],
    ids=["mixed", "two-curators"],
)
def test_validate_runs_the_channels_of_releases_and_its_two_paths_agree(
    query: dict, protocol: str, models: tuple[str, str]
) -> None:
    """``planner validate`` on a printed plan that runs a curator's release beside another
    release runs that tester; user-level and fast paths draw the same releases, so each
    family's error rates agree within 5 standard errors (400 trials each, seeds 1, 2)."""
    from planner.api import validate_document

    user = validate_document(trials=400, seed=1, path="user", **query)
    fast = validate_document(trials=400, seed=2, path="fast", **query)
    assert user["protocol"] == fast["protocol"] == protocol
    assert user["tester"]["class"] == "MixedChannelsTester"
    assert (user["tester"]["model1"], user["tester"]["model2"]) == models
    assert user["verdict"] in ("pass", "fail", "inconclusive")
    for one, two in zip(user["families"], fast["families"], strict=True):
        if not one["applicable"]:
            continue
        p = (one["error_rate"] + two["error_rate"]) / 2
        spread = math.sqrt(max(p * (1 - p), 1e-4) * 2 / 400)
        assert abs(one["error_rate"] - two["error_rate"]) <= 5 * spread, one["family"]


# A second hostile review's findings (2026-11-29, calibrated mixed plans) ---------------


def test_a_central_group_on_a_shuffle_protocol_is_told_its_delta() -> None:
    made = plan(Query.build("central,shuffle", "private", 64, 0.3, 1, 1, 1e-6))
    assert made.protocol.startswith("shuffle")
    assert any("group 1 (central) then has that protocol's (ε1, δ)-DP" in w for w in made.warnings)
    local = plan(Query.build("central,local", "private", 64, 0.3, 1, 1))
    assert not any("δ)-DP" in w for w in local.warnings)


@pytest.mark.parametrize(
    ("pair", "flags", "one_model"),
    [
        ("central,local", {"eps1": 12.202, "eps2": 0.234, "k": 500, "alpha": 0.173, "cost2": 20},
         "local"),
        ("local,central", {"eps1": 0.162, "eps2": 2.893, "k": 30, "alpha": 0.065, "cost1": 20},
         "local"),
    ],
)  # fmt: skip
def test_a_mixed_cost_allocation_costs_no_more_than_the_less_trusted_one(
    pair: str, flags: dict, one_model: str
) -> None:
    from planner.api import plan_answer

    mixed = plan_answer(model=pair, allocation="cost", **flags).allocation
    less = plan_answer(model=one_model, allocation="cost", **flags).allocation
    assert mixed is not None and less is not None
    assert mixed.cost <= less.cost


def test_a_mixed_fixed_n2_takes_what_the_less_trusted_plan_takes() -> None:
    from planner.api import plan_answer

    flags = {"k": 256, "alpha": 0.882, "eps1": 3.798, "eps2": 4.483, "delta": 1e-6}
    mixed = plan_answer(model="central,shuffle", allocation="fixed-n2", n2=283, **flags)
    less = plan_answer(model="shuffle", allocation="fixed-n2", n2=283, **flags)
    assert mixed.allocation is not None and less.allocation is not None
    assert mixed.allocation.n_users_group1 <= less.allocation.n_users_group1


def test_equal_eps_gives_one_plan_whichever_group_is_named_first_and_is_monotone() -> None:
    """Both orders' constants apply at equal ε; the larger plan is taken, so the two orders
    agree and relaxing either ε from there never costs users."""
    totals = {}
    for pair, eps1, eps2 in (
        ("central,local", 1.0, 1.0),
        ("local,central", 1.0, 1.0),
        ("local,central", 1.0, 1.001),
        ("local,central", 1.001, 1.0),
    ):
        totals[(pair, eps1, eps2)] = plan(
            Query.build(pair, "private", 64, 0.1, eps1, eps2)
        ).total_users
    assert totals[("central,local", 1.0, 1.0)] == totals[("local,central", 1.0, 1.0)]
    assert totals[("local,central", 1.0, 1.001)] <= totals[("local,central", 1.0, 1.0)]
    assert totals[("local,central", 1.001, 1.0)] <= totals[("local,central", 1.0, 1.0)]


def test_proof_constants_do_not_weigh_an_order_constant_mixed_plan() -> None:
    from planner.constants import ConstantSource, constants_with_source

    table = constants_with_source(ConstantSource.PROOF)
    made = plan(Query.build("central,local", "private", 128, 0.3, 0.5, 4), table)
    assert made.constant_source is ConstantSource.PROOF
    assert any("the mixed protocol was not weighed" in w for w in made.warnings)


def test_validate_with_a_mixed_allocation_checks_the_run_it_belongs_to() -> None:
    from planner.api import validation_query

    target = validation_query(
        model="local,central", k=30, alpha=0.065, eps1=0.162, eps2=2.893,
        allocation="cost", cost1=20,
    )  # fmt: skip
    assert not target.query.setting.is_mixed or target.query.setting.mechanism
    assert any("pair's allocation runs" in w for w in target.query.warnings)


def test_above_the_grid_a_local_group_at_a_large_eps_does_not_run_the_mixed_protocol() -> None:
    """A targeted hold-out (2026-11-30, seed 8601) failed the mixed protocol's plan at
    k = 9,476, α = 0.72, ε = (12.6 local, 1.33 curator): 768 + 3,038 users erred 0.63 on
    ``paninski-symmetric`` (k-RR at ε = 12.6 is almost noiseless: a few hundred users over
    thousands of bins). Above the grid the mixed protocol is covered only where the local
    group's ε is at most 5, whichever group has the larger ε; the plan runs the local
    group at ε ≤ 5 or both groups locally."""
    point = {"k": 9476, "alpha": 0.7227, "eps1": 12.584, "eps2": 1.3259}
    for model, local_first in (("local,central", True), ("central,local", False)):
        asked = point if local_first else {**point, "eps1": point["eps2"], "eps2": point["eps1"]}
        made = plan(Query.build(model, "private", **asked))
        assert made.coverage is Coverage.CALIBRATED
        if Setting.from_key(made.protocol).is_mixed:
            tester = made.tester_query
            assert (tester.eps1 if local_first else tester.eps2) <= 5.0, made.protocol
    for key in ("local/central-private+channels", "central/local-private+channels"):
        above = default_constants().for_setting(key).covered_above_grid[1]
        assert above == (
            {"eps_strong": (0.0, 5.0)} if key.startswith("local/") else {"eps_weak": (0.0, 5.0)}
        )
