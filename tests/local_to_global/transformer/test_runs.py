"""Which training runs an experiment asks for, and the settings each run gets."""

import dataclasses

from helpers import l2g_transformer
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.transformer.jobs import run_files, training_cost, training_priority

SECTION = {
    "model": {"d": 8},
    "batch_size": 16,
    "experiments": {
        "fig4": {"chain": {"p": 0.5, "q": 0.8}, "inits": ["standard", "ours"], "seeds": [1, 2], "steps": 30}
    },
    "fig4": {"window": 20},
    "claims": {"plateau_from": 10},
}


def test_run_settings_merge_the_experiment_over_the_shared_settings():
    section = l2g_transformer(SECTION)
    settings = section.run("fig4")
    assert (settings.model, settings.batch_size, settings.optimizer) == (section.model, 16, section.optimizer)
    assert settings.model.d == 8 and settings.steps == 30 and settings.chain == MarkovChain(0.5, 0.8)
    assert (settings.inits, settings.seeds, settings.embedding) == (("standard", "ours"), (1, 2), "scalar")


def test_runs_and_their_files_in_config_order():
    settings = l2g_transformer(SECTION)
    assert settings.runs("fig4") == [("standard", 1), ("standard", 2), ("ours", 1), ("ours", 2)]
    assert run_files(settings, "fig4", "losses.csv") == [
        f"results/local_to_global/transformer/fig4/{init}/seed{seed}/losses.csv"
        for init, seed in [("standard", 1), ("standard", 2), ("ours", 1), ("ours", 2)]
    ]


def test_longer_runs_get_higher_scheduling_priority():
    """Cost = steps + (tests at step 0 and every eval_every steps) / 3; priority 100 + cost // 100: the
    paper's Fig. 4 runs (2000 steps, a test every step) start before Fig. 3's (800, a test every 10)."""
    run = l2g_transformer(SECTION).run("fig4")

    def both(steps, eval_every):
        settings = dataclasses.replace(run, steps=steps, eval_every=eval_every)
        return training_cost(settings), training_priority(settings)

    assert both(2000, 1) == (2000 + 2001 / 3, 126)
    assert both(800, 10) == (800 + 81 / 3, 108)
    assert both(20, 7) == (20 + 3 / 3, 100)  # tests at steps 0, 7, 14
    assert both(10000, 1) == (10000 + 10001 / 3, 233)
    assert both(1, 1) == (1 + 2 / 3, 100)


def test_ablation_runs_take_each_figures_first_init_and_seed():
    from replication.papers.local_to_global.transformer.jobs import ablation_files, ablation_runs

    section = {
        **SECTION,
        "experiments": {
            "fig3": {"chain": {"p": 0.2, "q": 0.3}, "inits": ["standard"], "seeds": [3, 4], "steps": 30},
            "fig6": {"chain": {"p": 0.2, "q": 0.3}, "inits": ["rank_one", "standard"], "seeds": [5, 6], "steps": 30},
        },
        "ablation": {"fig3": ["peak_lr", "two_symbol_embedding"], "fig6": ["value_output"]},
    }
    settings = l2g_transformer(section)
    assert ablation_runs(settings, "fig3") == [
        ("pipeline", "standard", 3),
        ("peak_lr", "standard", 3),
        ("two_symbol_embedding", "standard", 3),
    ]
    assert ablation_runs(settings, "fig6") == [("pipeline", "rank_one", 5), ("value_output", "rank_one", 5)]
    # the pipeline variant is the figure's own run, the others their own ablation runs
    assert ablation_files(settings, "fig6") == [
        "results/local_to_global/transformer/fig6/rank_one/seed5/checkpoints.npz",
        "results/local_to_global/ablation_run/fig6/value_output/rank_one/seed5/checkpoints.npz",
    ]
    assert ablation_files(settings, "fig3") == [
        "results/local_to_global/transformer/fig3/standard/seed3/checkpoints.npz",
        "results/local_to_global/ablation_run/fig3/peak_lr/standard/seed3/checkpoints.npz",
        "results/local_to_global/ablation_run/fig3/two_symbol_embedding/standard/seed3/checkpoints.npz",
    ]
