"""The documentation's gallery (``replication.gallery``): every registered figure with its reference
image, caption, claims and rebuild command; every claim of a reference set shown on some figure."""

import subprocess

import pytest

from helpers import ROOT
from replication.claims_report import read_claims
from replication.gallery import (
    LISTED_CLAIMS,
    REFERENCE_DIR,
    caption_markdown,
    figure_claims,
    gallery_figures,
    gallery_markdown,
    rebuild_command,
    reference_claims_markdown,
    rests_on,
)

REPORT_PAGES = {"config": "claims.md", "phase": "phase-diagram.md", "plateau": "plateau.md"}


def figure(key: str):
    return next(item for item in gallery_figures() if item.key == key)


def labels_besides(item) -> set[str]:
    return {f.figure for f in item.paper.figures} - {item.figure.figure}


@pytest.mark.parametrize("reference_set", sorted(REPORT_PAGES))
def test_every_claim_of_a_reference_set_is_shown_on_a_figure(reference_set):
    claims = read_claims(REFERENCE_DIR / reference_set / "claims.csv")
    shown = set()
    for item in gallery_figures():
        if item.reference_set == reference_set:
            shown |= set(figure_claims(claims, item).index)
    left_out = claims[~claims.index.isin(shown) & (claims.kind != "documentation")]
    assert list(left_out.claim_id) == []


def test_which_claims_a_figure_rests_on():
    fig3a, fig4, as_coded = (
        figure("benign_overfitting/fig3a"),
        figure("local_to_global/fig4"),
        figure("benign_overfitting/fig4_as_coded"),
    )
    assert rests_on("Fig. 3 (Sec. 5)", fig3a, labels_besides(fig3a))  # a whole figure: each of its panels
    assert rests_on("Fig. 4 (caption; Sec. 5.2)", fig4, labels_besides(fig4))
    assert not rests_on("Fig. 5", fig4, labels_besides(fig4))
    assert not rests_on("Fig. 4", as_coded, labels_besides(as_coded))  # another figure's own label
    heatmaps, scatter = figure("local_to_global/phase_heatmaps"), figure("local_to_global/phase_plateau")
    assert rests_on("Phase diagram (beyond the paper)", heatmaps, labels_besides(heatmaps))
    assert not rests_on("Phase diagram (beyond the paper)", scatter, labels_besides(scatter))
    accuracy = figure("benign_overfitting/accuracy")
    assert rests_on("beyond (accuracy)", accuracy, labels_besides(accuracy))  # names the figure's file


def test_rebuild_commands_are_make_targets_of_the_set():
    assert rebuild_command(figure("local_to_global/fig1")).startswith("`make figures`; this figure alone: ")
    assert "`snakemake figures/local_to_global/fig1.pdf`" in rebuild_command(figure("local_to_global/fig1"))
    assert rebuild_command(figure("local_to_global/phase_heatmaps")).startswith("`make phase`")
    assert rebuild_command(figure("local_to_global/plateau_law")) == "`make plateau VARIANT=plateau-cells`"
    for command in {rebuild_command(item).split("`")[1] for item in gallery_figures()}:
        dry_run = subprocess.run([*command.split(), "-n"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert dry_run.returncode == 0, (command, dry_run.stderr)


def test_captions_are_the_papers_text_without_the_settings_template():
    for item in gallery_figures():
        caption = caption_markdown(item.paper, item.figure)
        assert caption and "{{" not in caption and "``" not in caption, item.key
    assert caption_markdown(figure("local_to_global/fig1").paper, figure("local_to_global/fig1").figure).startswith(
        "**Local to Global, Fig. 1**"
    )


def test_gallery_page_has_every_figure_with_its_image():
    page = gallery_markdown(REPORT_PAGES)
    assert page.count("\n### ") == len(gallery_figures())
    for item in gallery_figures():
        assert item.png.is_file(), item.key
        assert f"]({item.site_path})" in page
    # The phase diagram's per-cell claims are counted per spec claim they declare, with a link to every row.
    heatmaps = page.split("### Phase diagram over (p, q)")[1].split("\n### ")[0]
    claims = figure_claims(
        read_claims(REFERENCE_DIR / "phase" / "claims.csv"), figure("local_to_global/phase_heatmaps")
    )
    assert (
        len(claims) > LISTED_CLAIMS
        and "**beyond the paper**: 116 of 221 hold" in heatmaps
        and "(phase-diagram.md)" in heatmaps
    )
    with pytest.raises(KeyError, match="figures/reference/plateau"):
        gallery_markdown({"config": "claims.md", "phase": "phase-diagram.md"})


def test_reference_claims_reports_start_at_the_level_asked():
    smoke = reference_claims_markdown("smoke", 4)
    assert smoke.startswith("#### Claims report of figures/reference/smoke\n")
    assert "\n##### Local to Global\n" in smoke and "\n###### Local to Global\n" in smoke
    assert "expected at smoke" in smoke and "`figures/reference/config/claims.csv`" in smoke
    assert "expected at smoke" not in reference_claims_markdown("config", 4)
