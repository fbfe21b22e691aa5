"""The library's pieces stay small enough to read whole: no module of ``src/replication/`` over
350 lines and no function (methods and nested functions included) over 80, unless its docstring
gives the reason in a sentence that starts with "Long because" (docs/testing.md, Code size).

A module counts every line of its file; a function counts from its ``def`` line to its last line
(decorators left out). The sizes are read from the source with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from helpers import ROOT

LIBRARY = ROOT / "src" / "replication"
MODULE_LINES = 350
FUNCTION_LINES = 80
REASON = re.compile(r"(^|[.!?:;]\s+|\n\s*)Long because\b")
# It reads the source and runs none of it, so no mutant can fail it; under mutation testing the source
# it would read is mutmut's rewritten copy, many times longer.
pytestmark = pytest.mark.skipif(
    bool(os.environ.get("MUTANT_UNDER_TEST")), reason="reads the source, which mutation testing rewrites"
)


def gives_a_reason(docstring: str | None) -> bool:
    """Whether ``docstring`` holds a sentence that starts with "Long because"."""
    return bool(docstring and REASON.search(docstring))


def oversized(root: Path) -> list[str]:
    """``path: N lines`` for each module under ``root`` over ``MODULE_LINES`` lines and
    ``path:line name: N lines`` for each function over ``FUNCTION_LINES``, where its docstring
    gives no reason."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        tree = ast.parse(text, filename=str(path))
        name = path.relative_to(root).as_posix()
        lines = len(text.splitlines())
        if lines > MODULE_LINES and not gives_a_reason(ast.get_docstring(tree)):
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > FUNCTION_LINES and not gives_a_reason(ast.get_docstring(node)):
                    found.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_library_module_or_function_is_too_long_without_a_reason():
    assert LIBRARY.is_dir() and any(LIBRARY.rglob("*.py"))
    found = oversized(LIBRARY)
    assert not found, "too long, with no reason in the docstring:\n" + "\n".join(found)


def body(lines: int) -> str:
    return "".join(f"    x{i} = {i}\n" for i in range(lines))


@pytest.mark.parametrize(
    "source, expected",
    [
        (f"def f():\n{body(79)}", []),  # 80 lines with its def
        (f"def f():\n{body(80)}", ["m.py:1 f: 81 lines"]),
        (f"class A:\n    def f(self):\n{body(80).replace('    ', '        ')}", ["m.py:2 f: 81 lines"]),
        (f'def f():\n    """Sums. Long because the cases are one table."""\n{body(80)}', []),
        (f'def f():\n    """Long because the cases are one table."""\n{body(80)}', []),
        (f'def f():\n    """Not long because of anything."""\n{body(80)}', ["m.py:1 f: 82 lines"]),
        ("x = 1\n" * 350, []),
        ("x = 1\n" * 351, ["m.py: 351 lines"]),
        ('"""A table.\n\nLong because it is one table."""\n' + "x = 1\n" * 351, []),
    ],
    ids=[
        "function-at-the-limit",
        "function-over",
        "method-over",
        "reason-mid-docstring",
        "reason-first",
        "no-reason",
        "module-at-the-limit",
        "module-over",
        "module-with-a-reason",
    ],
)
def test_the_sizes_are_measured_as_documented(tmp_path, source, expected):
    (tmp_path / "m.py").write_text(source)
    assert oversized(tmp_path) == expected
