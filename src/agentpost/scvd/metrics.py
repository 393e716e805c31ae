"""The SCVD self-verification metrics (spec b.6) with their eligible sets, NA rules, aggregation
order, pooled counts, bootstrap intervals, coverage and the RSR–accuracy correlation.

Every metric is a ratio num/den of two masks over the records of one run (``_masks``); a zero
denominator gives NA (None, never 0). Aggregation follows the paper: per run, then the mean over
the runs of a model where the metric is defined, then the macro mean over the models where it is
defined (``n_models`` says how many contributed).

Populations (spec defaults): "valid" means I_c = I_v = 1 with a replayed y_c. ICA, W2R, R2W,
net gain and ``final_acc`` share one population so that final_acc = ICA + W2R − R2W (Eq. 4)
holds exactly: with ``ica_population="valid_yc"`` it is the valid set (records without y_f are
left out, a departure the spec does not need to state since its runs are all graded);
``all_with_missing_as_0`` uses every graded trajectory with a missing y_c counted as 0.
``final_acc_all`` is PASS@1 over every graded trajectory (the headline).

The bootstrap resamples trajectories with replacement inside each (model, run) and repeats the
whole aggregation; the interval is the 2.5/97.5 percentile over replicates where the value is
defined. Shapes: masks are (N,) bool; replicate sums are (B,) per stratum.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentpost.intervals import MIN_N, RESAMPLES
from agentpost.scvd.records import MetricRecord, normalise_z
from agentpost.scvd.records import from_dicts as from_dicts  # the CLI's entry point

METRICS = (
    "VTR", "VOR", "EDR", "ESP", "CPR", "VPR", "RSR",
    "ICA", "final_acc", "final_acc_all", "W2R", "R2W", "net_gain",
)  # fmt: skip
ALIASES = {"CAR": "CPR", "VPC": "VPR"}
POPULATIONS = ("valid_yc", "all_with_missing_as_0")


def _arrays(records: Sequence[MetricRecord]) -> dict[str, np.ndarray]:
    def col(f):
        return np.array([f(r) for r in records], dtype=bool)

    zs = [normalise_z(r.z) for r in records]
    return {
        "annot": col(lambda r: r.I_c is not None),
        "ic": col(lambda r: bool(r.I_c)),
        "iv": col(lambda r: bool(r.I_c) and bool(r.I_v)),
        "err": np.array([z == "error" for z in zs], dtype=bool),
        "ok": np.array([z == "no-error" for z in zs], dtype=bool),
        "hasyc": col(lambda r: r.y_c is not None),
        "yc1": col(lambda r: r.y_c == 1),
        "hasyf": col(lambda r: r.y_f is not None),
        "yf1": col(lambda r: r.y_f == 1),
    }


def _masks(a: dict[str, np.ndarray], population: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """metric → (numerator mask, denominator mask), each (N,) bool."""
    if population not in POPULATIONS:
        raise ValueError(f"ica_population must be one of {POPULATIONS}")
    valid = a["iv"] & a["hasyc"]
    yc0 = valid & ~a["yc1"]
    yc1 = valid & a["yc1"]
    if population == "valid_yc":
        pop, pyc1 = valid & a["hasyf"], a["yc1"]
    else:
        pop, pyc1 = a["hasyf"], valid & a["yc1"]
    w2r = pop & ~pyc1 & a["yf1"]
    r2w = pop & pyc1 & ~a["yf1"]
    return {
        "VTR": (a["iv"], a["annot"] & a["ic"]),
        "VOR": (a["iv"] & (a["err"] | a["ok"]), a["iv"]),
        "EDR": (yc0 & a["err"], yc0),
        "ESP": (valid & a["err"] & ~a["yc1"], valid & a["err"]),
        "CPR": (yc1 & a["ok"], yc1),
        "VPR": (valid & a["ok"] & a["yc1"], valid & a["ok"]),
        "RSR": (yc0 & a["err"] & a["yf1"], yc0 & a["err"] & a["hasyf"]),
        "ICA": (pop & pyc1, pop),
        "final_acc": (pop & a["yf1"], pop),
        "final_acc_all": (a["hasyf"] & a["yf1"], a["hasyf"]),
        "W2R": (w2r, pop),
        "R2W": (r2w, pop),
        "net_gain": (w2r, pop),  # numerator fixed up in _ratio: W2R − R2W
    }


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise num/den with NaN where den == 0. Shapes (...,) → (...,)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1), np.nan)


def _stratum_values(masks, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Per-metric values for resampled index sets ``idx`` (B, n) → (B,)."""
    out = {}
    for name, (num, den) in masks.items():
        n = num[idx].sum(axis=-1).astype(float)
        d = den[idx].sum(axis=-1).astype(float)
        if name == "net_gain":
            n = n - masks["R2W"][0][idx].sum(axis=-1)
        out[name] = _ratio(n, d)
    return out


def _strata(records: Sequence[MetricRecord]) -> dict[str, dict[str, np.ndarray]]:
    """model → run → indices into records."""
    out: dict[str, dict[str, list[int]]] = {}
    for i, r in enumerate(records):
        out.setdefault(r.model, {}).setdefault(r.run, []).append(i)
    return {m: {k: np.array(v) for k, v in runs.items()} for m, runs in out.items()}


def _aggregate(per_run: dict[str, dict[str, dict[str, np.ndarray]]]):
    """per_run[model][run][metric] (B,) → (per_model[model][metric] (B,), macro[metric] (B,))."""
    per_model = {}
    for model, runs in per_run.items():
        per_model[model] = {m: _nanmean(np.stack([runs[r][m] for r in runs])) for m in METRICS}
    if not per_model:  # no records: every macro value is NA
        return per_model, {m: np.array([np.nan]) for m in METRICS}
    macro = {m: _nanmean(np.stack([per_model[k][m] for k in per_model])) for m in METRICS}
    return per_model, macro


def _nanmean(x: np.ndarray) -> np.ndarray:
    """Mean over axis 0 ignoring NaN; NaN where every entry is NaN. (K, B) → (B,)."""
    n = (~np.isnan(x)).sum(axis=0)
    s = np.nansum(x, axis=0)
    return np.where(n > 0, s / np.maximum(n, 1), np.nan)


def _val(x) -> float | None:
    x = float(np.asarray(x).reshape(-1)[0])
    return None if np.isnan(x) else x


def with_aliases(values: dict[str, float | None]) -> dict[str, float | None]:
    out = dict(values)
    for alias, name in ALIASES.items():
        out[alias] = values.get(name)
    return out


def compute(
    records: Sequence[MetricRecord],
    *,
    ica_population: str = "valid_yc",
    n_boot: int = RESAMPLES,
    seed: int = 0,
) -> dict:
    """Per-run, per-model and macro metrics, pooled counts, coverage, CIs and Pearson r."""
    records = list(records)
    a = _arrays(records)
    masks = _masks(a, ica_population)
    strata = _strata(records)
    per_run = {
        m: {r: _stratum_values(masks, idx[None, :]) for r, idx in runs.items()}
        for m, runs in strata.items()
    }
    per_model, macro = _aggregate(per_run)
    out = {
        "per_run": {
            m: {r: with_aliases({k: _val(v) for k, v in vals.items()}) for r, vals in runs.items()}
            for m, runs in per_run.items()
        },
        "per_model": {
            m: with_aliases({k: _val(v) for k, v in d.items()}) for m, d in per_model.items()
        },
        "macro": with_aliases({k: _val(v) for k, v in macro.items()}),
        "n_models": with_aliases(
            {k: int(sum(_val(per_model[m][k]) is not None for m in per_model)) for k in METRICS}
        ),
        "counts": counts(records, a, masks, strata),
        "coverage": coverage(a, strata),
        "ica_population": ica_population,
    }
    out["pearson_rsr_final_acc"] = pearson_rsr(out["per_model"])
    if n_boot > 0 and records:
        out["cis"] = bootstrap(masks, strata, n_boot=n_boot, seed=seed)
    return out


def _pooled(a, masks, idx: np.ndarray) -> dict[str, int]:
    c = {"trajectories": len(idx), "annotated": int(a["annot"][idx].sum()),
         "candidates": int(a["ic"][idx].sum()), "verified": int(a["iv"][idx].sum()),
         "valid_yc": int((a["iv"] & a["hasyc"])[idx].sum()),
         "replay_missing": int((a["iv"] & ~a["hasyc"])[idx].sum()),
         "graded": int(a["hasyf"][idx].sum())}  # fmt: skip
    for name, (num, den) in masks.items():
        if name != "net_gain":
            c[f"{name}_num"], c[f"{name}_den"] = int(num[idx].sum()), int(den[idx].sum())
    return c


def counts(records, a, masks, strata) -> dict:
    """Pooled counts (numerators and denominators) per model and over everything."""
    per_model = {
        m: _pooled(a, masks, np.concatenate(list(runs.values()))) for m, runs in strata.items()
    }
    return {"per_model": per_model, "all": _pooled(a, masks, np.arange(len(records)))}


def coverage(a, strata) -> dict:
    """Coverage table (pooled over runs): candidates formed / annotated, replays valid / verified."""
    rows = {}
    for m, runs in strata.items():
        idx = np.concatenate(list(runs.values()))
        ann, ic = int(a["annot"][idx].sum()), int(a["ic"][idx].sum())
        iv, ok = int(a["iv"][idx].sum()), int((a["iv"] & a["hasyc"])[idx].sum())
        rows[m] = {
            "trajectories": len(idx), "annotated": ann, "candidates": ic,
            "candidate_rate": ic / ann if ann else None, "replays": iv, "replays_valid": ok,
            "replay_valid_rate": ok / iv if iv else None,
        }  # fmt: skip
    return rows


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson r; None with fewer than 3 points or zero variance."""
    if len(x) < 3:
        return None
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    xa, ya = xa - xa.mean(), ya - ya.mean()
    den = np.sqrt((xa * xa).sum() * (ya * ya).sum())
    return None if den == 0 else float((xa * ya).sum() / den)


def pearson_rsr(per_model: dict[str, dict]) -> dict:
    """r between model-level RSR and final accuracy (PASS@1, ``final_acc_all``)."""
    pts = [(v["RSR"], v["final_acc_all"]) for v in per_model.values()
           if v["RSR"] is not None and v["final_acc_all"] is not None]  # fmt: skip
    return {"r": pearson([p[0] for p in pts], [p[1] for p in pts]), "n_models": len(pts)}


def bootstrap(masks, strata, *, n_boot: int, seed: int) -> dict:
    """95% percentile intervals for per-model and macro values: {"macro": {metric: [lo, hi]}};
    none for a model with fewer than ``intervals.MIN_N`` trajectories (nor for the macro when
    all models together have fewer), nor of zero width."""
    rng = np.random.default_rng(seed)
    per_run = {}
    for m, runs in strata.items():
        per_run[m] = {}
        for r, idx in runs.items():
            draw = idx[rng.integers(0, len(idx), size=(n_boot, len(idx)))]
            per_run[m][r] = _stratum_values(masks, draw)
    per_model, macro = _aggregate(per_run)
    n = {m: sum(len(idx) for idx in runs.values()) for m, runs in strata.items()}

    def cis(d: dict, units: int) -> dict:
        return with_aliases({k: _interval(v) if units >= MIN_N else None for k, v in d.items()})

    return {
        "level": 0.95, "n_boot": n_boot, "seed": seed, "min_n": MIN_N,
        "macro": cis(macro, sum(n.values())),
        "per_model": {m: cis(d, n.get(m, 0)) for m, d in per_model.items()},
    }  # fmt: skip


def _interval(x: np.ndarray) -> list[float] | None:
    """The 95% percentile interval of the defined replicates; None when none is defined or it
    has zero width (every resample agrees: never shown as a 95% CI)."""
    x = x[~np.isnan(x)]
    if x.size == 0:
        return None
    lo, hi = np.percentile(x, [2.5, 97.5])
    return [float(lo), float(hi)] if hi - lo > 1e-12 else None
