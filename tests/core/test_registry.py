"""The paper contract (replication.contract) and the registry (replication.registry): discovery of
paper packages, their paths and figures, which paper a claims table means, and the merged config
schema. Fake paper packages are written under tmp_path and put on the import path."""

import itertools
import textwrap

import pytest
import yaml

from replication import contract, registry
from replication.contract import Figure, Paper, SpecClaim
from replication.registry import paper_named

_names = itertools.count()


def paper_source(paper_id, arxiv, *, name=None, figures="()"):
    return textwrap.dedent(
        f"""
        from replication.contract import Figure, Paper, SpecClaim

        PAPER = Paper(
            id={paper_id!r},
            name={name or paper_id.title()!r},
            title="The title of " + {paper_id!r},
            arxiv={arxiv!r},
            figures={figures},
            claims=(SpecClaim("C-1", "Fig. 1", "s", "c"),),
        )
        """
    )


def fake_papers(tmp_path, monkeypatch, packages: dict[str, str | None], modules=()) -> str:
    """A package of papers on the import path: ``{folder: __init__ source}``; returns its name."""
    root_name = f"fake_papers_{next(_names)}"
    root = tmp_path / root_name
    root.mkdir()
    (root / "__init__.py").write_text("")
    for folder, source in packages.items():
        (root / folder).mkdir()
        (root / folder / "__init__.py").write_text(source or "")
    for module in modules:  # plain modules beside the packages: not papers
        (root / f"{module}.py").write_text("PAPER = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(contract, "PAPERS_PACKAGE", root_name)
    return root_name


def discover():
    return registry.papers.__wrapped__()  # the undecorated function: no cache across tests


def test_discovery_orders_papers_by_arxiv_id(tmp_path, monkeypatch):
    packages = {
        "zeta": paper_source("zeta", "2101.00001"),
        "alpha": paper_source("alpha", "2301.00002"),
        "beta": paper_source("beta", "2101.00001"),
    }
    fake_papers(tmp_path, monkeypatch, packages, modules=["helpers"])  # a plain module is no paper
    assert [p.id for p in discover()] == ["beta", "zeta", "alpha"]  # arXiv id, then the id on a tie


def test_a_package_without_a_paper_is_an_error(tmp_path, monkeypatch):
    name = fake_papers(tmp_path, monkeypatch, {"good": paper_source("good", "1"), "empty": ""})
    with pytest.raises(TypeError) as error:
        discover()
    assert str(error.value) == f"{name}.empty defines no PAPER (a replication.contract.Paper)"


def test_a_paper_not_named_like_its_package_is_an_error(tmp_path, monkeypatch):
    name = fake_papers(tmp_path, monkeypatch, {"folder": paper_source("other", "1")})
    with pytest.raises(ValueError) as error:
        discover()
    assert str(error.value) == f"{name}.folder: PAPER.id is 'other'; it must be the package name"


def test_paths_of_a_paper(tmp_path, monkeypatch):
    figures = (
        '(Figure("figures/demo/fig1.pdf", "Fig. 1", "one.rst"), Figure("figures/demo/fig2.pdf", "Fig. 2", "two.rst"))'
    )
    name = fake_papers(tmp_path, monkeypatch, {"demo": paper_source("demo", "1", figures=figures)})
    folder = tmp_path / name / "demo"
    for rule in ("b.smk", "a.smk", "notes.txt"):
        (folder / "rules").mkdir(exist_ok=True)
        (folder / "rules" / rule).write_text("")
    (paper,) = discover()
    assert paper.package_dir == folder
    assert paper.rules_files == [folder / "rules" / "a.smk", folder / "rules" / "b.smk"]
    assert paper.schema_path == folder / "schema.yaml" and paper.smoke_path == folder / "smoke.yaml"
    assert (paper.results_dir, paper.figures_dir) == ("results/demo", "figures/demo")
    assert paper.figure("fig2") == Figure("figures/demo/fig2.pdf", "Fig. 2", "two.rst")
    assert paper.caption("fig1") == str(folder / "report" / "one.rst")
    with pytest.raises(KeyError) as error:
        paper.figure("fig3")
    assert error.value.args[0] == (
        "demo: no figure figures/demo/fig3.pdf; registered: figures/demo/fig1.pdf, figures/demo/fig2.pdf"
    )
    assert paper.manifests == ("all",) and paper.figure("fig1").manifest == "all"


def test_subpackages_bring_rules_captions_and_manifests(tmp_path, monkeypatch):
    figures = (
        '(Figure("figures/demo/fig1.pdf", "Fig. 1", "one.rst"), '
        'Figure("figures/demo/big.pdf", "Big", "part/report/big.rst", manifest="big"))'
    )
    name = fake_papers(tmp_path, monkeypatch, {"demo": paper_source("demo", "1", figures=figures)})
    folder = tmp_path / name / "demo"
    for rules in (folder / "rules", folder / "part" / "rules", folder / "part" / "deeper" / "rules"):
        rules.mkdir(parents=True)
        (rules / "x.smk").write_text("")
    (folder / "part" / "notes.smk").write_text("")  # not in a rules/ folder
    (paper,) = discover()
    assert paper.rules_files == [
        folder / "part" / "deeper" / "rules" / "x.smk",
        folder / "part" / "rules" / "x.smk",
        folder / "rules" / "x.smk",
    ]
    assert paper.caption("big") == str(folder / "part" / "report" / "big.rst")
    assert paper.caption("fig1") == str(folder / "report" / "one.rst")
    assert paper.manifests == ("all", "big")


def test_a_paper_split_into_parts_has_rules_and_captions_in_each(tmp_path, monkeypatch):
    """Rules in any subpackage's rules/ folder, included in path order; a caption given as a path is
    relative to the package, a bare name lies in the package's own report/."""
    figures = (
        '(Figure("figures/demo/fig1.pdf", "Fig. 1", "one.rst"), '
        'Figure("figures/demo/fig2.pdf", "Fig. 2", "b/report/two.rst"))'
    )
    name = fake_papers(tmp_path, monkeypatch, {"demo": paper_source("demo", "1", figures=figures)})
    folder = tmp_path / name / "demo"
    for rules in ("b/rules/b.smk", "rules/top.smk", "a/rules/a.smk", "a/scripts/not_rules.smk", "a/rules/notes.txt"):
        (folder / rules).parent.mkdir(parents=True, exist_ok=True)
        (folder / rules).write_text("")
    (paper,) = discover()
    assert paper.rules_files == [folder / "a/rules/a.smk", folder / "b/rules/b.smk", folder / "rules/top.smk"]
    assert paper.caption("fig1") == str(folder / "report" / "one.rst")
    assert paper.caption("fig2") == str(folder / "b" / "report" / "two.rst")
    assert paper.caption_path(paper.figure("fig2")) == folder / "b" / "report" / "two.rst"


def test_the_shipped_papers():
    found = registry.papers()
    assert [p.id for p in found] == ["local_to_global", "benign_overfitting"]  # 2406.03072 before 2409.17625
    assert [p.arxiv for p in found] == sorted(p.arxiv for p in found)
    for paper in found:
        assert paper.package_dir.name == paper.id and paper.schema_path.is_file() and paper.rules_files
        for figure in paper.figures:
            stem = figure.path.rsplit("/", 1)[1].removesuffix(".pdf")
            assert paper.figure(stem) is figure


def test_spec_claim_number_is_the_last_number_of_its_id():
    assert SpecClaim("L2G-12", "", "", "").number == "12"
    assert SpecClaim("fig3-claim2", "", "", "").number == "2"
    assert SpecClaim("7", "", "", "").number == "7"


@pytest.mark.parametrize(
    "text, paper_id",
    [
        ("local_to_global", "local_to_global"),
        ("Local to Global", "local_to_global"),
        ("LOCAL-TO-GLOBAL", "local_to_global"),
        ("local", "local_to_global"),  # the start of a name
        ("[Local to Global]", "local_to_global"),  # punctuation around it
        ("Local to Global: Learning Dynamics", "local_to_global"),  # the start of the title
        ("Local to Global (the transformer runs)", "local_to_global"),  # starts with the name
        ("benign overfitting", "benign_overfitting"),
        ("Benign or Not-Benign Overfitting in Token Selection", "benign_overfitting"),
        ("my copy of 2409.17625", "benign_overfitting"),  # its arXiv id
        ("see arXiv 2406.03072v2", "local_to_global"),
        ("", None),
        (" -- ", None),
        ("exponential decay", None),
        ("global", None),  # inside a name, not at its start
    ],
)
def test_paper_named(text, paper_id):
    paper = paper_named(text)
    assert (paper.id if paper else None) == paper_id


def test_paper_named_with_a_versioned_arxiv_id(monkeypatch):
    paper = Paper("demo", "Demo", "A demo", "2501.00001v3", "dem", (), ())
    monkeypatch.setattr(registry, "papers", lambda: (paper,))
    assert paper_named("see 2501.00001") is paper  # the id without its version
    assert paper_named("see 2501.00002") is None


def schema_papers(tmp_path, monkeypatch, fragments: dict[str, dict]):
    """Papers whose schema.yaml are ``fragments``, in that order."""
    name = fake_papers(tmp_path, monkeypatch, {pid: paper_source(pid, str(i)) for i, pid in enumerate(fragments)})
    for pid, fragment in fragments.items():
        (tmp_path / name / pid / "schema.yaml").write_text(yaml.safe_dump(fragment))
    found = discover()
    monkeypatch.setattr(registry, "papers", lambda: found)
    core = tmp_path / "core.schema.yaml"
    core.write_text(
        yaml.safe_dump(
            {"type": "object", "$defs": {"seed": {"type": "integer"}}, "properties": {"settings": {"type": "string"}}}
        )
    )
    return core


def test_config_schema_merges_the_papers_sections_and_definitions(tmp_path, monkeypatch):
    core = schema_papers(
        tmp_path,
        monkeypatch,
        {
            "one": {"type": "object", "$defs": {"seed": {"type": "integer"}, "rate": {"type": "number"}}},
            "two": {"type": "object", "properties": {"k": {"$ref": "#/$defs/rate"}}},
        },
    )
    schema = registry.config_schema(core)
    assert schema == {
        "type": "object",
        "$defs": {"seed": {"type": "integer"}, "rate": {"type": "number"}},
        "properties": {
            "one": {"type": "object"},
            "two": {"type": "object", "properties": {"k": {"$ref": "#/$defs/rate"}}},
            "settings": {"type": "string"},
        },
    }
    assert list(schema["properties"]) == ["one", "two", "settings"]  # the papers' sections first
    assert registry.config_schema(str(core)) == schema


def test_config_schema_without_core_definitions(tmp_path, monkeypatch):
    core = schema_papers(tmp_path, monkeypatch, {"one": {"$defs": {"rate": {"type": "number"}}}})
    core.write_text(yaml.safe_dump({"properties": {}}))
    assert registry.config_schema(core) == {"$defs": {"rate": {"type": "number"}}, "properties": {"one": {}}}


def test_config_schema_refuses_a_conflicting_definition(tmp_path, monkeypatch):
    core = schema_papers(tmp_path, monkeypatch, {"one": {"$defs": {"seed": {"type": "string"}}}})
    with pytest.raises(ValueError) as error:
        registry.config_schema(core)
    assert str(error.value) == f"{registry.papers()[0].schema_path}: $defs/seed differs from the shared definition"


def test_config_schema_refuses_a_paper_named_like_a_shared_section(tmp_path, monkeypatch):
    core = schema_papers(tmp_path, monkeypatch, {"settings": {"type": "object"}})
    with pytest.raises(ValueError) as error:
        registry.config_schema(core)
    assert str(error.value) == f"{registry.papers()[0].schema_path}: config section 'settings' is a shared section"


def test_a_paper_gathers_its_parts_figures_and_tables_after_its_own():
    from replication.contract import Part, Table

    part = Part(
        "extra",
        figures=(Figure("figures/demo/big.pdf", "Big", "big.rst"),),
        tables=(Table("figures/demo/t1.md", "Table 1"),),
        manifest="big",
    )
    own = (Figure("figures/demo/fig1.pdf", "Fig. 1", "one.rst"),)
    paper = Paper(
        "demo", "Demo", "A demo", "2501.00001", own, (), tables=(Table("figures/demo/t0.md", "T0"),), parts=(part,)
    )
    assert [f.path for f in paper.figures] == ["figures/demo/fig1.pdf", "figures/demo/big.pdf"]
    assert paper.figures[1] == Figure("figures/demo/big.pdf", "Big", "extra/report/big.rst", manifest="big")
    assert [t.path for t in paper.tables] == ["figures/demo/t0.md", "figures/demo/t1.md"]
    assert paper.tables[1].manifest == "big"
