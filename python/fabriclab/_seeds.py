"""Sweep tables with several seeds per point, reduced to one row per point.

The reproductions run every point with several seeds (a ``run.seed`` column,
one row per seed). The figures draw one mark per point: :func:`aggregate`
turns a table's rows into one row per point holding the mean over its seeds,
and beside every number that varies its 95% interval (Student's t) as
``<column>_ci_lo`` / ``<column>_ci_hi``, and the number of seeds as
``seeds``. A column whose seeds agree at every point (a parameter carried
along, a deterministic count) gets no interval columns. A table with one
seed per point comes back unchanged.

Which columns identify a point: in a sweep table (``point``, the swept
columns, ``status``, then the run's summary) the swept columns between
``point`` and ``status``; in another table (derived from a sweep) the columns
whose values are the same for every seed, row by row. The other columns are
measured, and reduced over the seeds that ran (``status`` ok, where the table
has one): numbers to their mean over the seeds that have a value, booleans
(``stable``) to true only if every seed's is, text (a time series, a point id)
to the first seed's, whose rows stay reachable as ``row.seed_rows``.

Pure Python (no pandas, no matplotlib), so that it is cheap to test.
"""

import math

SEED = "run.seed"

# The 97.5% quantile of Student's t for 1..30 degrees of freedom (as the
# verdict engine's crates/repro/src/engine/stats.rs).
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def t975(df):
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        return math.inf
    if df <= 30:
        return _T975[df - 1]
    return 2.000 if df <= 60 else 1.980 if df <= 120 else 1.960


def estimate(values):
    """``(mean, ci_lo, ci_hi)`` of ``values``: the mean and its 95% interval
    (Student's t); the interval is ``(None, None)`` for fewer than two values
    or a value that is not finite. Equal values give exactly that value."""
    n = len(values)
    if n == 0:
        return None, None, None
    if all(v == values[0] for v in values):
        mean = values[0]
    else:
        mean = math.fsum(values) / n
    if n < 2 or not all(math.isfinite(v) for v in values):
        return mean, None, None
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


class Row(dict):
    """One point's row: the mean over its seeds; ``seed_rows`` are the rows
    (one per seed that ran) it was reduced from."""

    seed_rows = ()


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _columns(rows):
    cols = []
    seen = set()
    for r in rows:
        for c in r:
            if c not in seen:
                seen.add(c)
                cols.append(c)
    return cols


def _key_columns(rows, cols):
    """The columns that identify a point (see the module docstring), or None
    if they cannot be told apart (seeds with different numbers of rows)."""
    if "point" in cols and "status" in cols and cols.index("point") < cols.index("status"):
        return [c for c in cols[cols.index("point") + 1:cols.index("status")] if c != SEED]
    by_seed = {}
    for r in rows:
        by_seed.setdefault(r.get(SEED), []).append(r)
    tables = list(by_seed.values())
    n = len(tables[0])
    if any(len(t) != n for t in tables):
        return None
    return [c for c in cols if c != SEED
            and all(t[i].get(c) == tables[0][i].get(c) for t in tables[1:] for i in range(n))]


def _reduce(values):
    """A measured column over seeds: ``(value, ci_lo, ci_hi, numeric)``."""
    present = [v for v in values if v is not None]
    if not present:
        return None, None, None, False
    if all(_is_number(v) for v in present):
        mean, lo, hi = estimate([float(v) for v in present])
        return mean, lo, hi, True
    if all(isinstance(v, bool) for v in present):
        return all(present), None, None, False
    return present[0], None, None, False


def aggregate(rows):
    """One row per point (the mean over its seeds, with intervals and
    ``seeds``), or ``rows`` themselves when no point has more than one seed."""
    rows = list(rows)
    if not rows or not any(SEED in r for r in rows):
        return rows
    cols = _columns(rows)
    keys = _key_columns(rows, cols)
    if keys is None:
        return rows
    groups = {}
    for r in rows:
        groups.setdefault(tuple(_hashable(r.get(c)) for c in keys), []).append(r)
    if all(len(g) == 1 for g in groups.values()):
        return rows
    measured = [c for c in cols if c != SEED and c not in keys]
    reduced = []
    with_ci = set()
    for g in groups.values():
        ran = [r for r in g if r.get("status", "ok") == "ok"]
        use = ran or g[:1]
        values = {}
        for c in measured:
            v, lo, hi, numeric = _reduce([r.get(c) for r in use])
            values[c] = (v, lo, hi)
            if numeric and len({r.get(c) for r in use if r.get(c) is not None}) > 1:
                with_ci.add(c)
        reduced.append((g[0], use, len(ran), values))
    out = []
    for first, use, ran, values in reduced:
        row = Row()
        for c in cols:
            if c == SEED:
                continue
            if c in keys:
                row[c] = first.get(c)
                continue
            v, lo, hi = values[c]
            row[c] = v
            if c in with_ci:
                row[c + "_ci_lo"] = lo
                row[c + "_ci_hi"] = hi
        row["seeds"] = ran if "status" in cols else len(use)
        row.seed_rows = use
        out.append(row)
    return out


def _hashable(v):
    return tuple(v) if isinstance(v, list) else v


def interval(r, col):
    """The 95% interval ``(lo, hi)`` of ``r[col]`` over seeds, or None."""
    lo, hi = r.get(col + "_ci_lo"), r.get(col + "_ci_hi")
    if lo is None or hi is None:
        return None
    return lo, hi


def per_seed(r, name, f):
    """Sets ``r[name] = f(row)``; for a row reduced over seeds, the mean of
    ``f`` over its seeds' rows, with its interval (a quantity derived from
    several columns is averaged over the seeds, not computed from means)."""
    seed_rows = getattr(r, "seed_rows", ())
    if len(seed_rows) < 2:
        r[name] = f(r)
        return r[name]
    vals = [f(s) for s in seed_rows]
    mean, lo, hi, _ = _reduce(vals)
    r[name] = mean
    r[name + "_ci_lo"] = lo
    r[name + "_ci_hi"] = hi
    return mean
