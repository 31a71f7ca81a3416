"""fl.run beyond file paths (dicts, TOML text, bundled experiments by name),
fl.validate, fl.protocols, and a Result's provenance."""

import os
import re
import shutil
import subprocess

import pytest

import fabriclab as fl
from conftest import QUICKSTART, built_cli, repo

SHORT = {"run.duration_ms": 0.6, "run.warmup_ms": 0.1}
# experiments/quickstart.toml as Python data.
QUICKSTART_DICT = {
    "topology": {"kind": "leaf_spine", "tors": 4, "hosts_per_tor": 8, "spines": 2},
    "protocol": {"name": "sird"},
    "workload": {"kind": "poisson", "size_dist": "wkb", "load": 0.5},
    "run": {"duration_ms": 3.0, "warmup_ms": 0.5, "seed": 1},
}
# Fields that measure the machine, not the simulation.
MACHINE = ("wall_time_s", "events_per_s")
CLI = built_cli()


def sim(summary):
    return {k: v for k, v in summary.items() if k not in MACHINE}


def tomllib_or_skip():
    try:
        import tomllib
    except ImportError:
        pytest.skip("needs Python >= 3.11 (tomllib)")
    return tomllib


@pytest.fixture(scope="module")
def from_file():
    return fl.run(QUICKSTART, progress=False, **SHORT)


def test_run_takes_a_nested_dict(from_file):
    r = fl.run(QUICKSTART_DICT, progress=False, **SHORT)
    assert sim(r.summary) == sim(from_file.summary)
    assert r.source == "<dict>"


def test_run_takes_a_dict_with_dotted_keys(from_file):
    flat = {"%s.%s" % (t, k): v for t, table in QUICKSTART_DICT.items() for k, v in table.items()}
    flat.update(SHORT)
    assert sim(fl.run(flat, progress=False).summary) == sim(from_file.summary)
    # Dotted and nested keys merge as TOML's do.
    mixed = dict(QUICKSTART_DICT, **{"protocol.name": "homa"})
    mixed["protocol"] = {}
    assert fl.validate(mixed)["protocol"]["name"] == "homa"


def test_run_takes_toml_text(from_file):
    with open(QUICKSTART) as f:
        text = f.read()
    r = fl.run(text, progress=False, **SHORT)
    assert sim(r.summary) == sim(from_file.summary)
    assert r.source == "<TOML string>"


def test_dict_errors_are_the_file_errors_without_a_position(tmp_path):
    bad = {"workload": {"kind": "poisson", "size_dist": "wkb", "load": 1.7}}
    path = tmp_path / "bad.toml"
    path.write_text('[workload]\nkind = "poisson"\nsize_dist = "wkb"\nload = 1.7\n')
    with pytest.raises(fl.ConfigError) as from_file:
        fl.validate(str(path))
    with pytest.raises(fl.ConfigError) as from_dict:
        fl.validate(bad)
    assert str(from_dict.value).startswith("config error at `workload.load`: got 1.7")
    assert str(from_file.value) == str(from_dict.value).replace(": got", ": %s:4:1: got" % path, 1)
    with pytest.raises(fl.ConfigError, match=r"^config error at `workload.lod`"):
        fl.run({"workload.lod": 0.5})


def test_toml_text_errors_point_into_the_string():
    with pytest.raises(fl.ConfigError, match=r"`workload.load`: <TOML string>:2:1: "):
        fl.validate('[workload]\nload = "high"\n')
    with pytest.raises(fl.ConfigError, match="invalid TOML at <TOML string>:1"):
        fl.validate("[workload\nload = 0.5")


@pytest.mark.parametrize("config, message", [
    ({"run": {"seed": None}}, r"at `run.seed`: cannot take None \(leave the key out"),
    ({"run": {"seed": object()}}, r"at `run.seed`: cannot take object .*allowed: bool, int, float, str, list, dict"),
    ({"run": {"seed": 2 ** 70}}, r"at `run.seed`: .* out of range"),
    ({"run": {"seed": 1}, "run.seed": 2}, r"at `run.seed`: set twice"),
    ({"run": 3, "run.seed": 2}, r"at `run`: is a integer, not a table"),
    ({"run": {1: 2}}, r"at `run`: config keys must be strings, got 1"),
    ({"run..seed": 1}, r"at `run..seed`: a key must be a name or a dotted path"),
    ({"output": {"traces": ["cwnd", None]}}, r"at `output.traces\[1\]`: cannot take None"),
])
def test_bad_dicts_name_the_key(config, message):
    with pytest.raises(fl.ConfigError, match=message):
        fl.validate(config)


def test_other_config_types_are_refused():
    with pytest.raises(TypeError, match="not int"):
        fl.run(3)
    with pytest.raises(fl.ConfigError, match=r"pass \{\}"):
        fl.run("  ")


def test_relative_paths_in_dicts_and_text_resolve_against_the_current_directory(tmp_path, monkeypatch):
    shutil.copy(repo("experiments", "repro", "paydebt", "memcached_w1.txt"), tmp_path / "sizes.txt")
    monkeypatch.chdir(tmp_path)
    config = {"workload": {"kind": "poisson", "size_cdf_file": "sizes.txt"}}
    resolved = fl.validate(config)
    assert resolved["workload"]["size_cdf_file"] == str(tmp_path / "sizes.txt")
    text = '[workload]\nkind = "poisson"\nsize_cdf_file = "sizes.txt"\n'
    assert fl.validate(text)["workload"]["size_cdf_file"] == str(tmp_path / "sizes.txt")
    with pytest.raises(fl.ConfigError, match="workload"):
        fl.validate({"workload": {"kind": "poisson", "size_cdf_file": "missing.txt"}}, **{"run.duration_ms": 0.1})


def test_validate_gives_the_resolved_config_of_the_cli():
    resolved = fl.validate(QUICKSTART, **{"protocol.name": "eqds"})
    assert resolved["protocol"]["name"] == "eqds"
    # Defaults that depend on the protocol are filled in.
    assert resolved["network"]["load_balancing"]
    assert resolved["protocol"]["eqds"]
    if not os.path.exists(CLI):
        pytest.skip("the CLI is not built (cargo build --release, or cargo test --profile checked)")
    tomllib = tomllib_or_skip()
    out = subprocess.run([CLI, "validate", QUICKSTART, "--set", "protocol.name=eqds"],
                         capture_output=True, text=True, check=True).stdout
    assert resolved == tomllib.loads(out)


def test_validate_raises_config_error():
    with pytest.raises(fl.ConfigError, match="workload.load"):
        fl.validate(QUICKSTART, **{"workload.load": -1.0})


def test_protocols_are_the_cli_tables():
    ps = fl.protocols()
    names = [p["name"] for p in ps]
    assert "sird" in names and "homa" in names
    for p in ps:
        assert set(p) == {"name", "paper", "load_balancing", "params"}
        for d in p["params"]:
            assert set(d) == {"key", "default", "meaning", "source", "allowed"}
            assert d["key"] and d["meaning"] and d["source"], (p["name"], d)
    sird = {d["key"]: d for d in ps[names.index("sird")]["params"]}
    # Every documented default is the one validate fills in.
    resolved = fl.validate({"protocol": {"name": "sird"}})["protocol"]["sird"]
    assert set(sird) <= set(resolved)
    if not os.path.exists(CLI):
        pytest.skip("the CLI is not built (cargo build --release, or cargo test --profile checked)")
    out = subprocess.run([CLI, "protocols", "--names"], capture_output=True, text=True, check=True).stdout
    assert names == out.split()
    text = subprocess.run([CLI, "protocols"], capture_output=True, text=True, check=True).stdout
    for p in ps:
        for d in p["params"]:
            assert re.search(r"^    %s\s+= %s\s+%s  \(%s\)$" % tuple(
                re.escape(x) for x in (d["key"], d["default"], d["meaning"], d["source"])), text, re.M), d


def test_experiments_ship_inside_the_package():
    root = fl.experiments_dir()
    package = os.path.dirname(os.path.abspath(fl.__file__))
    assert os.path.normpath(root) == os.path.join(package, "experiments")
    names = fl.experiments()
    assert "quickstart" in names and "sird/balanced-wkc" in names
    assert "sweeps/quickstart-loads" in fl.experiments(sweeps=True)
    assert not set(names) & set(fl.experiments(sweeps=True))
    # Every file of the repository's experiments/ is in the installed copy, byte for byte.
    src = repo("experiments")
    for d, _, files in os.walk(src):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), src)
            with open(os.path.join(src, rel), "rb") as a, open(os.path.join(root, rel), "rb") as b:
                assert a.read() == b.read(), rel
    # Only claims, recorded measurements and the experiments whose trace file
    # `fabriclab export-cm` writes first are neither experiments nor sweeps: a
    # bundled experiment that fails to load is named here, not silently unlisted.
    for name, (kind, error) in fl._run._bundled().items():
        if name in ("xval/mixed-k8-trace", "xval/smartt-mixed-k8-trace"):
            assert kind == "other" and "mixed-k8.cm does not exist" in error, (name, error)
        elif kind == "other":
            assert name.endswith("/claims") or "/recorded/" in name, (name, error)


def test_run_a_bundled_experiment_by_name_outside_a_checkout(tmp_path, monkeypatch, from_file):
    monkeypatch.chdir(tmp_path)
    r = fl.run("quickstart", progress=False, **SHORT)
    assert sim(r.summary) == sim(from_file.summary)
    assert r.source == "quickstart"
    assert fl.validate("sird/balanced-wkc.toml") == fl.validate("sird/balanced-wkc")
    assert fl.validate("sird/balanced-wkc")["workload"]["size_dist"] == "wkc"


def test_a_name_that_matches_nothing_lists_close_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(fl.ConfigError, match="sird/balanced-wkc") as e:
        fl.run("sird/balanced-wkz")
    assert "neither a file" in str(e.value) and "fabriclab.experiments()" in str(e.value)
    with pytest.raises(fl.ConfigError, match="sird/balanced-wkc"):
        fl.run("balanced-wkc")
    with pytest.raises(fl.ConfigError, match="sweeps/quickstart-loads"):
        fl.sweep("sweeps/quickstart-load")


def test_result_carries_its_provenance(from_file):
    r = from_file
    assert r.config == fl.validate(QUICKSTART, **SHORT)
    assert r.config["run"]["duration_ms"] == 0.6
    assert r.seed == 1 == r.summary["seed"]
    assert r.source == QUICKSTART
    assert r.version["fabriclab_version"] == fl.__version__
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", r.version["git_commit"])
    # The TOML text reruns the same experiment.
    assert sim(fl.run(r.config_toml, progress=False).summary) == sim(r.summary)
    assert fl.run(QUICKSTART, progress=False, messages=False, **SHORT, **{"run.seed": 5}).seed == 5


def test_git_commit_is_the_checkouts_when_built_from_one():
    from fabriclab import _core

    head = subprocess.run(["git", "-C", repo(), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    # The extension embeds the commit it was built from; a build from this checkout knows one.
    assert re.fullmatch(r"[0-9a-f]{40}", _core.git_commit)


def test_result_html_repr_is_a_summary_table(from_file):
    h = from_file._repr_html_()
    assert h.startswith("<table>") and h.endswith("</table>")
    assert "<th style='text-align:left'>protocol</th><td>sird</td>" in h
    assert "%.2f Gbps/host" % from_file.summary["goodput_gbps"] in h
    assert "messages completed</th><td>%d</td>" % from_file.summary["messages_completed"] in h
    assert fl.__version__ in h
