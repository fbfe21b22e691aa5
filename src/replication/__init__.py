"""Replication of ML-theory papers: a core that names no paper, and one plug-in package per paper.

Each replicated paper is a package under ``replication.papers`` that provides what
``replication.contract.Paper`` asks for (its rules, config section, figures and claims, its own
config checks). The core modules, one concern each: ``contract`` (what a paper provides),
``registry`` (finding the papers, merging their config schemas),
``errors`` (the config error type), ``config`` (validation), ``settings`` (typed settings),
``io`` (atomic writes, logs), ``paths`` (where outputs and references live), ``manifest``
(``figures/all``), ``plotting`` (style and the one figure-saving function), ``claims`` (the
claims table format) and ``claims_report``, ``perturbation`` (last-bit perturbations of a noise
ensemble member), ``envelopes`` (the noise envelopes of a reference set), ``deviation`` (deviations
and the tolerance rule), ``diff`` (regenerated figures against references), ``provenance``,
``snakemake_command`` and ``pipeline_run`` (running the workflow). No import cycle among them
(tests/core/test_import_graph.py).
"""
