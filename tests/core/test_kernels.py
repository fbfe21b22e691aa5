"""Kernel families and ensemble members (replication.kernels), and the members' spreads with the
envelope and its own spread read from them (replication.diff.ensemble): fake trees and a fake
Snakemake here, nothing is run."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from helpers import ROOT
from replication.diff import ensemble
from replication.diff.ensemble import (
    MEMBER_COLUMNS,
    envelope_of,
    read_spreads,
    run_ensemble,
    spread_summary,
    write_ensemble,
)
from replication.diff.envelopes import ENVELOPE_COLUMNS, IMAGE_COLUMN, read_envelope
from replication.kernels import FAMILIES, KERNEL_VARIABLES, Member, describe, native_kernels, parse_members
from replication.perturbation import VARIABLE


def test_members_are_integers_or_family_names():
    members = parse_members(["1", "aten-avx2", " 12 ", "mkl-compatible"])
    assert [(m.label, m.family, m.perturbation) for m in members] == [
        ("1", None, 1),
        ("aten-avx2", "aten-avx2", 0),
        ("12", None, 12),
        ("mkl-compatible", "mkl-compatible", 0),
    ]
    assert [m.folder for m in members] == ["member1", "member-aten-avx2", "member12", "member-mkl-compatible"]
    assert parse_members([]) == []


@pytest.mark.parametrize("bad", ["0", "-1", "avx2", "1.5", "", "ATEN-AVX2"])
def test_an_unknown_member_is_refused_naming_the_allowed_ones(bad):
    with pytest.raises(ValueError) as error:
        parse_members(["1", bad])
    assert str(error.value) == (
        f"ensemble member {bad.strip()!r}: allowed are perturbation members (integers >= 1) and the kernel "
        f"families {', '.join(FAMILIES)}"
    )


def test_a_member_given_twice_is_refused():
    with pytest.raises(ValueError, match="^ensemble members given twice: 2, aten-avx2$"):
        parse_members(["2", "aten-avx2", "3", "2", "aten-avx2"])


def test_a_members_environment_is_exactly_its_family_and_perturbation():
    machine = {
        "PATH": "/bin",
        "OPENBLAS_CORETYPE": "Haswell",  # OpenBLAS stays as the machine sets it
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "AVX",
        "NUMBA_CPU_FEATURES": "+avx",
        VARIABLE: "9",
    }
    kept = {"PATH": "/bin", "OPENBLAS_CORETYPE": "Haswell"}
    assert Member("3", perturbation=3).environment(machine) == kept | {VARIABLE: "3"}
    assert Member("aten-avx2", family="aten-avx2").environment(machine) == kept | {"ATEN_CPU_CAPABILITY": "avx2"}
    assert Member("mkl-avx2", family="mkl-avx2").environment(machine) == kept | {
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "MKL_CBWR": "AVX2",
    }
    assert machine["ATEN_CPU_CAPABILITY"] == "default"  # the given environment is not changed
    every = set().union(*FAMILIES.values())
    assert every < set(KERNEL_VARIABLES) and not any(name.startswith("OPENBLAS") for name in KERNEL_VARIABLES)


def test_the_environment_defaults_to_this_process(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    monkeypatch.setenv("KEEP_ME", "yes")
    env = Member("avx2-machine", family="avx2-machine").environment()
    assert env["KEEP_ME"] == "yes" and env["ATEN_CPU_CAPABILITY"] == "avx2" and env["NUMBA_CPU_NAME"] == "haswell"


def test_describe_names_the_variables_or_the_ulps():
    assert describe(Member("4", perturbation=4)) == "4 (4 ulps)"
    assert describe(Member("mkl-avx2", family="mkl-avx2")) == "mkl-avx2 (MKL_ENABLE_INSTRUCTIONS=AVX2 MKL_CBWR=AVX2)"


def test_native_kernels_record_this_process(monkeypatch):
    import torch

    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    record = native_kernels()
    assert record["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert record["env_MKL_CBWR"] == "COMPATIBLE" and record["env_ATEN_CPU_CAPABILITY"] == ""
    assert set(record) == {"torch_cpu_capability", "mkl", "numpy_dispatch"} | {f"env_{v}" for v in KERNEL_VARIABLES}
    if torch.backends.mkl.is_available():
        assert record["mkl"].startswith("Version 20")


def test_run_ensemble_runs_each_member_in_its_environment(tmp_path, monkeypatch, capsys):
    calls = []

    def fake_run(command, check, env):
        calls.append((command, check, env))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(ensemble.subprocess, "run", fake_run)
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    members = parse_members(["2", "aten-default"])
    folders = run_ensemble(members, tmp_path / "c.yaml", tmp_path / "s", ["figures/a.pdf", "figures/b.pdf"], 3)
    assert folders == {"2": tmp_path / "s" / "member2", "aten-default": tmp_path / "s" / "member-aten-default"}
    for (command, check, _env), folder in zip(calls, folders.values()):
        assert command == [
            str(Path(sys.executable).parent / "snakemake"),
            "--snakefile",
            str(ROOT / "workflow" / "Snakefile"),
            "--directory",
            str(folder),
            "figures/a.pdf",
            "figures/b.pdf",
            "--cores",
            "3",
            "--configfile",
            str(tmp_path / "c.yaml"),
            "--quiet",
            "rules",
        ]
        assert check is True
    assert calls[0][2][VARIABLE] == "2" and "ATEN_CPU_CAPABILITY" not in calls[0][2]
    assert calls[1][2]["ATEN_CPU_CAPABILITY"] == "default" and VARIABLE not in calls[1][2]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"ensemble member 2 (4 ulps): figures/a.pdf figures/b.pdf in {tmp_path / 's' / 'member2'}"
    assert lines[2].startswith("ensemble member aten-default (ATEN_CPU_CAPABILITY=default): ")
    assert " s wall, " in lines[3] and " s CPU, load average " in lines[3]


def test_run_ensemble_prints_what_each_member_cost(tmp_path, monkeypatch, capsys):
    """A fake clock and fake children's CPU counters (started long before the ensemble): member 1
    takes 30 s and 50 CPU-s, member 2 12 s and 20 CPU-s; the 1-minute load average is 1.5. Without
    ``cores`` Snakemake gets every core."""
    clock = {"wall": 1000.0, "cpu": 200.0}
    cost = iter([(30.0, 50.0), (12.0, 20.0)])
    cores = []

    def fake_run(command, check, env):
        cores.append(command[command.index("--cores") + 1])
        wall, cpu = next(cost)
        clock["wall"] += wall
        clock["cpu"] += cpu
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(ensemble.subprocess, "run", fake_run)
    monkeypatch.setattr(ensemble, "time", SimpleNamespace(perf_counter=lambda: clock["wall"]))
    monkeypatch.setattr(ensemble, "_children_cpu", lambda: clock["cpu"])
    monkeypatch.setattr(ensemble.os, "getloadavg", lambda: (1.5, 0.75, 0.25))
    run_ensemble(parse_members(["1", "2"]), tmp_path / "c.yaml", tmp_path, ["figures/all"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "ensemble member 1: 30 s wall, 50 s CPU, load average 1.5"
    assert lines[3] == "ensemble member 2: 12 s wall, 20 s CPU, load average 1.5"
    assert cores == ["all", "all"]


def write_tree(folder: Path, values: dict[str, list[float]]) -> None:
    (folder / "figures" / "p").mkdir(parents=True)
    (folder / "figures" / "all").write_text(
        "path\tsha256\tpaper\tfigure\n" + "".join(f"figures/p/{k}.pdf\tx\tP\t{k}\n" for k in values)
    )
    for key, column in values.items():
        pd.DataFrame({"y": column}).to_csv(folder / "figures" / "p" / f"{key}.csv", index=False, float_format="%.17g")
        (folder / "figures" / "p" / f"{key}.png").write_text(folder.name)


def test_spreads_per_member_and_the_envelope_as_their_largest(tmp_path):
    """fig: member 1 moves y by 0.1, member 2 by 0.3 (relative 0.15), the family by 0.2 (relative
    0.2, from another row); images: RMS 1, 2, 5 by member."""
    base = tmp_path / "base"
    write_tree(base, {"fig": [1.0, 2.0]})
    moved = {"1": [1.1, 2.0], "2": [1.0, 2.3], "aten-avx2": [1.2, 2.0]}
    folders = {}
    for label, column in moved.items():
        folders[label] = tmp_path / f"m{label}"
        write_tree(folders[label], {"fig": column})
    rms = {"m1": 1.0, "m2": 2.0, "maten-avx2": 5.0}

    def fake_rms(actual, expected):
        return rms[Path(actual).parents[2].name]

    written = write_ensemble(base, folders, tmp_path / "set", fake_rms)
    assert written == {tmp_path / "set" / "envelope.csv", tmp_path / "set" / "envelope_members.csv"}
    spreads = read_spreads(tmp_path / "set")
    assert list(spreads.columns) == MEMBER_COLUMNS
    got = {(r.member, r.column): (r.spread, r.spread_rel) for r in spreads.astype({"member": str}).itertuples()}
    assert got[("1", "y")] == (pytest.approx(0.1), pytest.approx(0.1))
    assert got[("2", "y")] == (pytest.approx(0.3), pytest.approx(0.15))
    assert got[("aten-avx2", "y")] == (pytest.approx(0.2), pytest.approx(0.2))
    assert got[("aten-avx2", IMAGE_COLUMN)][0] == 5.0
    envelope = pd.read_csv(tmp_path / "set" / "envelope.csv")
    assert list(envelope.columns) == ENVELOPE_COLUMNS
    row = envelope.set_index("column").loc["y"]
    assert (row.envelope, row.envelope_rel, row.members) == (pytest.approx(0.3), pytest.approx(0.2), 3)
    assert read_envelope(tmp_path / "set") == {("p/fig", "y"): pytest.approx(0.3), ("p/fig", IMAGE_COLUMN): 5.0}
    # Folders without labels are labelled by their names.
    write_ensemble(base, [folders["1"]], tmp_path / "other", fake_rms)
    assert set(read_spreads(tmp_path / "other").member) == {"m1"}
    none = read_spreads(tmp_path / "none")
    assert none.empty and list(none.columns) == MEMBER_COLUMNS


def test_envelope_of_keeps_the_order_and_counts_members():
    spreads = pd.DataFrame(
        [
            ("b", "y", "1", 1.0, 0.1),
            ("a", "x", "1", 2.0, 0.2),
            ("b", "y", "fam", 3.0, 0.05),
            ("a", "x", "fam", 0.0, 0.0),
        ],
        columns=MEMBER_COLUMNS,
    )
    frame = envelope_of(spreads)
    assert frame.values.tolist() == [["b", "y", 3.0, 0.1, 2], ["a", "x", 2.0, 0.2, 2]]


def test_spread_summary_states_the_envelopes_own_spread():
    """Four perturbation members (largest of 2 against largest of 4) and two families, per column."""
    rows = [
        ("f", "y", 1, 1.0),
        ("f", "y", 2, 2.0),
        ("f", "y", 3, 4.0),
        ("f", "y", 4, 3.0),
        ("f", "y", "aten-avx2", 8.0),
        ("f", "y", "mkl-compatible", 0.0),
        ("f", IMAGE_COLUMN, 1, 9.0),
        ("g", "z", 1, 0.0),
        ("g", "z", 2, 0.0),
        ("g", "z", 3, 0.0),
        ("g", "z", 4, 0.0),
        ("g", "z", "aten-avx2", 1e-9),
        ("g", "z", "mkl-compatible", 0.0),
    ]
    spreads = pd.DataFrame([(k, c, m, s, np.nan) for k, c, m, s in rows], columns=MEMBER_COLUMNS)
    summary = spread_summary(spreads.astype({"member": str})).set_index(["key", "column"])
    assert ("f", IMAGE_COLUMN) not in summary.index
    f = summary.loc[("f", "y")]
    assert (f.ulp, f.ulp_half, f["aten-avx2"], f["aten-avx2/ulp"], f["mkl-compatible/ulp"], f["all"]) == (
        4.0,
        2.0,
        8.0,
        2.0,
        0.0,
        8.0,
    )
    g = summary.loc[("g", "z")]
    assert g.ulp == 0.0 and g["aten-avx2/ulp"] == np.inf and np.isnan(g["mkl-compatible/ulp"])
    # Against every other member: aten-avx2 8 / 4 (member 3), mkl-compatible 0 / 8.
    assert (f["aten-avx2/others"], f["mkl-compatible/others"]) == (2.0, 0.0)
    assert g["aten-avx2/others"] == np.inf and g["mkl-compatible/others"] == 0.0  # 0 against 1e-9
    assert g["all"] == 1e-9  # the largest of its own column's members
    per_family = [f"{m}{r}" for m in ("aten-avx2", "mkl-compatible") for r in ("", "/ulp", "/others")]
    assert list(summary.columns) == ["ulp", "ulp_half", *per_family, "all"]


def test_spread_summary_halves_the_members_by_number_and_keeps_the_figures_order():
    """Members 1, 2, 3 and 10: the first half is 1 and 2 (by number, not as text). Rows and families
    keep the order they first appear in; a column only a family moved has no ulp envelope; a member
    listed twice (two members' files read together) counts with its larger spread."""
    rows = [
        ("p/b", "y", "10", 5.0),
        ("p/b", "y", "mkl-compatible", 1.0),
        ("p/b", "y", "1", 1.0),
        ("p/b", "y", "2", 2.0),
        ("p/b", "y", "3", 0.5),
        ("p/b", "y", "aten-avx2", 4.0),
        ("p/b", "y", "aten-avx2", 6.0),
        ("p/a", "x", "aten-avx2", 3.0),
    ]
    spreads = pd.DataFrame([(*row, np.nan) for row in rows], columns=MEMBER_COLUMNS)
    summary = spread_summary(spreads)
    assert summary[["key", "column"]].values.tolist() == [["p/b", "y"], ["p/a", "x"]]
    assert [c for c in summary.columns if c.endswith("/others")] == ["mkl-compatible/others", "aten-avx2/others"]
    b, a = summary.iloc[0], summary.iloc[1]
    assert (b.ulp, b.ulp_half, b["aten-avx2"], b["all"]) == (5.0, 2.0, 6.0, 6.0)
    assert np.isnan(a.ulp) and np.isnan(a.ulp_half) and (a["aten-avx2"], a["all"]) == (3.0, 3.0)
    # Two members: the first half is member 1 alone.
    two = spread_summary(spreads[spreads.member.isin(["1", "2"])]).iloc[0]
    assert (two.ulp, two.ulp_half) == (2.0, 1.0)


def test_kernel_families_build_their_own_targets(tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr(
        ensemble.subprocess,
        "run",
        lambda command, check, env: built.append(command[5 : command.index("--cores")]),
    )
    members = parse_members(["1", "aten-avx2", "2"])
    run_ensemble(members, tmp_path / "c.yaml", tmp_path, ["figures/all"], family_targets=["figures/x.pdf"])
    assert built == [["figures/all"], ["figures/x.pdf"], ["figures/all"]]
    built.clear()
    run_ensemble(members, tmp_path / "c.yaml", tmp_path, ["figures/all"], family_targets=[])
    assert built == [["figures/all"]] * 3


def test_the_record_names_numpys_dispatch_targets_that_this_cpu_runs(monkeypatch):
    import numpy as np
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    targets = native_kernels()["numpy_dispatch"].split()
    assert all(name in __cpu_dispatch__ and __cpu_features__[name] for name in targets)
    assert bool(targets) == any(__cpu_features__.get(name) for name in __cpu_dispatch__)  # none only on such a CPU
    # Another NumPy layout (no such module): its version stands in.
    monkeypatch.setitem(sys.modules, "numpy._core._multiarray_umath", None)
    assert native_kernels()["numpy_dispatch"] == f"numpy {np.__version__}"


def test_mkls_version_is_read_from_torchs_build_configuration():
    from replication.kernels import _mkl_version

    config = "PyTorch built with:\n  - Intel(R) oneAPI Math Kernel Library Version 2024.2-Product Build 20240605\n"
    assert _mkl_version(config) == "Version 2024.2-Product Build 20240605"
    assert _mkl_version("PyTorch built with:\n  - OpenMP 201511\n") == "none"


def test_an_older_mkl_line_is_kept_whole_but_its_list_marker():
    from replication.kernels import _mkl_version

    config = "PyTorch built with:\n  - Math Kernel Library Version 2019.0.5 Update X\n"
    assert _mkl_version(config) == "Math Kernel Library Version 2019.0.5 Update X"
