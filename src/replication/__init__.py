"""Replication of ML-theory papers on how transformers train.

Each replicated paper is a package under ``replication.papers`` that provides what
``replication.registry.Paper`` asks for (its rules, config section, figures and claims); the
shared modules name no paper: ``registry`` (the contract and discovery), ``io`` (atomic writes,
logs), ``plotting`` (style and the one figure-saving function), ``config`` (validation),
``claims`` (the claims table format) and ``claims_report``, ``diff``, ``provenance``.
"""
