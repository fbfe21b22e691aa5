"""Which training runs an experiment asks for, and the settings each run gets."""

from replication.papers.local_to_global.runs import run_files, run_settings, runs

SECTION = {
    "model": {"d": 8},
    "batch_size": 16,
    "steps": 100,
    "experiments": {
        "fig4": {"chain": {"p": 0.5, "q": 0.8}, "inits": ["standard", "ours"], "seeds": [1, 2], "steps": 30}
    },
    "fig4": {"window": 20},
    "claims": {"plateau": [10, 20]},
}


def test_run_settings_merge_the_experiment_over_the_shared_settings():
    settings = run_settings(SECTION, "fig4")
    assert settings == {
        "model": {"d": 8},
        "batch_size": 16,
        "steps": 30,
        "chain": {"p": 0.5, "q": 0.8},
        "inits": ["standard", "ours"],
        "seeds": [1, 2],
    }


def test_runs_and_their_files_in_config_order():
    assert runs(SECTION, "fig4") == [("standard", 1), ("standard", 2), ("ours", 1), ("ours", 2)]
    assert run_files(SECTION, "fig4", "losses.csv") == [
        f"results/local_to_global/transformer/fig4/{init}/seed{seed}/losses.csv"
        for init, seed in [("standard", 1), ("standard", 2), ("ours", 1), ("ours", 2)]
    ]
