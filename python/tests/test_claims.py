"""fabriclab.claims / fabriclab.judge: the reproductions' verdict engine from
Python. The claims files change as the papers are converted, so these tests
read a paper's claims at test time instead of naming any."""

import math

import pandas as pd
import pytest

import fabriclab as fl

VERDICTS = {"holds", "holds qualitatively", "does not hold", "not measured"}


def papers():
    return fl.repro_papers()


def test_the_papers_are_listed():
    names = papers()
    assert "sird" in names and len(names) == len(set(names)) >= 4


@pytest.mark.parametrize("paper", ["sird", "paydebt", "smartt", "bolt", "nanotransport"])
def test_claims_list_every_claim_part(paper):
    c = fl.claims(paper)
    assert list(c.columns)[:3] == ["claim", "where", "statement"]
    assert len(c) > 0 and c["claim"].notna().all() and c["statement"].astype(bool).all()
    for r in c.itertuples(index=False):
        if not isinstance(r.part, str):
            assert isinstance(r.not_simulated, str) and r.not_simulated  # a claim without parts says why it cannot be measured
            continue
        assert r.unit and r.side in ("both", "at_most", "at_least")
        assert r.paper_lo <= r.paper_hi
        assert r.qualitative_lo <= r.holds_lo <= r.holds_hi <= r.qualitative_hi
        assert r.holds_why and r.qualitative_why


def test_an_unknown_paper_raises_the_package_error():
    with pytest.raises(fl.ConfigError, match="unknown paper"):
        fl.claims("no-such-paper")
    with pytest.raises(fl.ConfigError, match="unknown paper"):
        fl.judge("no-such-paper", "measurements.toml")


def measurements(tmp_path, paper, seeds, entries=""):
    path = tmp_path / "measurements.toml"
    path.write_text('paper = "%s"\nmode = "test"\nseeds = %s\n%s' % (paper, list(seeds), entries))
    return path


def entry(claim, part, seed, unit, value, samples=None):
    s = '\n[[entry]]\nclaim = "%s"\npart = "%s"\nseed = %d\nunit = "%s"\noutcome = { value = %r }\n' % (
        claim, part, seed, unit, float(value))
    if samples is not None:
        s += "samples = %d\n" % samples
    return s


@pytest.mark.parametrize("paper", ["sird", "smartt"])
def test_nothing_measured_is_not_measured(tmp_path, paper):
    v = fl.judge(paper, measurements(tmp_path, paper, [1, 2, 3]))
    assert len(v) >= len(set(fl.claims(paper)["claim"]))
    assert set(v["claim_verdict"]) == {"not measured"}
    assert set(v["claim"]) == set(fl.claims(paper)["claim"])


def test_a_measurement_of_an_unknown_part_raises_naming_the_file(tmp_path):
    path = measurements(tmp_path, "sird", [1], entry("NO-SUCH-CLAIM", "nope", 1, "ratio", 1.0))
    with pytest.raises(fl.ConfigError, match="NO-SUCH-CLAIM") as e:
        fl.judge("sird", path, seeds=1)
    assert str(path) in str(e.value)


def test_an_unreadable_or_malformed_file_raises_naming_it(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(fl.ConfigError, match="cannot read") as e:
        fl.judge("sird", missing)
    assert str(missing) in str(e.value)
    bad = tmp_path / "bad.toml"
    bad.write_text('paper = "sird"\nseeds = "three"\n')
    with pytest.raises(fl.ConfigError) as e:
        fl.judge("sird", bad)
    assert str(bad) in str(e.value)
    with pytest.raises(fl.ConfigError, match="not of sird"):
        fl.judge("sird", measurements(tmp_path, "paydebt", [1]))
    with pytest.raises(fl.ConfigError, match="at least one seed"):
        fl.judge("sird", measurements(tmp_path, "sird", [1]), seeds=0)


def measured_part():
    """A (paper, claims row) of a claim part some paper measures, or None while
    every claims file holds only not-simulated claims."""
    for paper in papers():
        c = fl.claims(paper)
        parts = c[c["part"].notna()]
        if len(parts):
            return paper, parts.iloc[0]
    return None


def inside_holds_band(r):
    lo, hi = r["holds_lo"], r["holds_hi"]
    if math.isfinite(lo) and math.isfinite(hi):
        return (lo + hi) / 2
    return (r["paper_lo"] + r["paper_hi"]) / 2


def test_a_value_in_the_holds_band_holds_and_too_few_seeds_are_not_measured(tmp_path):
    found = measured_part()
    if found is None:
        pytest.skip("every claims file holds only not-simulated claims")
    paper, r = found
    v = inside_holds_band(r)
    samples = 100000 if pd.notna(r["percentile"]) else None
    three = "".join(entry(r["claim"], r["part"], s, r["unit"], v, samples) for s in (1, 2, 3))
    j = fl.judge(paper, measurements(tmp_path, paper, [1, 2, 3], three))
    row = j[(j["claim"] == r["claim"]) & (j["part"] == r["part"])].iloc[0]
    assert row["part_verdict"] == "holds", row["reason"]
    assert row["seeds"] == 3 and row["mean"] == pytest.approx(v)
    assert row["ci_lo"] == pytest.approx(v) and row["ci_hi"] == pytest.approx(v)
    assert set(j["part_verdict"].dropna()) <= VERDICTS

    one = entry(r["claim"], r["part"], 1, r["unit"], v, samples)
    j = fl.judge(paper, measurements(tmp_path, paper, [1], one), seeds=3)
    row = j[(j["claim"] == r["claim"]) & (j["part"] == r["part"])].iloc[0]
    assert row["part_verdict"] == "not measured" and "seed" in row["reason"]
    assert row["claim_verdict"] in ("not measured", "does not hold")
    assert pd.isna(row["ci_lo"])
    j = fl.judge(paper, measurements(tmp_path, paper, [1], one), seeds=1)
    assert j[(j["claim"] == r["claim"]) & (j["part"] == r["part"])].iloc[0]["part_verdict"] == "holds"

    wrong_unit = entry(r["claim"], r["part"], 1, "count" if r["unit"] != "count" else "ratio", v)
    with pytest.raises(fl.ConfigError, match="unit|ratio|count"):
        fl.judge(paper, measurements(tmp_path, paper, [1], wrong_unit), seeds=1)
