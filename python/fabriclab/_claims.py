"""The reproductions' claims and verdicts, from the verdict engine of
``fabriclab repro`` (crates/repro, compiled into ``fabriclab._core``):
``fabriclab.claims(paper)`` lists a paper's claims file, ``fabriclab.judge(paper,
path)`` judges a measurements file (a reproduction's measurements.toml) with
the same rules as the reports. Both return pandas DataFrames, one row per
claim part; a claim that simulation cannot measure has one row without a part.
"""

import os

from ._core_import import core

CLAIM_COLUMNS = ["claim", "where", "statement", "compares", "notes", "not_simulated", "part", "measures", "unit",
                 "paper_lo", "paper_hi", "side", "headline", "percentile", "holds_lo", "holds_hi", "holds_why",
                 "qualitative_lo", "qualitative_hi", "qualitative_why"]
VERDICT_COLUMNS = ["claim", "claim_verdict", "part", "part_verdict", "headline", "mean", "ci_lo", "ci_hi", "seeds",
                   "samples", "unit", "paper_lo", "paper_hi", "side", "reason", "claim_reason", "notes"]


def repro_papers():
    """The names of the papers ``fabriclab repro`` reproduces."""
    return list(core().repro_papers())


def claims(paper):
    """A paper's claims (experiments/repro/PAPER/claims.toml, as compiled into
    the package): one row per claim part with the paper's value (``paper_lo``
    to ``paper_hi``, equal for one number), its unit and side, and the bands
    within which it holds (``holds_lo``/``holds_hi``) and holds qualitatively
    (``qualitative_lo``/``qualitative_hi``), each with its reason; a one-sided
    claim's band has an infinite end. Raises ConfigError for an unknown paper."""
    import pandas as pd

    return pd.DataFrame(core().repro_claims(paper), columns=CLAIM_COLUMNS)


def judge(paper, path, seeds=3):
    """Judges the measurements file ``path`` (measurements.toml of
    ``fabriclab repro PAPER``) under the paper's claims, as the report does;
    ``seeds`` is how many seeds must give a value per part (3 for a full run,
    1 for a quick run or one transcribed seed). One row per claim part: its
    verdict (holds, holds qualitatively, does not hold, not measured), the mean
    over seeds with its 95% interval (``ci_lo``/``ci_hi``, empty for one seed),
    the seeds and samples behind it, the paper's value, and why it does not
    hold; ``claim_verdict`` is the claim's (the worst of its headline parts).
    Raises ConfigError for an unknown paper, an unreadable or malformed file, a
    file of another paper, or a measurement of a part the claims do not have."""
    import pandas as pd

    rows = core().repro_judge(paper, os.fspath(path), int(seeds))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)
