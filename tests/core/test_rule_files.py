"""The rule files share the Snakefile's one namespace, so each must stand on its own: it reads no
name that another rule file defines (only its own and the core's, workflow/rules/common.smk), a
name that two files define is the same statement in both (the same import, the same settings
object), and a paper's rule files need no import alias against a clash."""

import ast
import io
import re
import tokenize
from pathlib import Path

from replication.registry import papers

ROOT = Path(__file__).resolve().parents[2]
CORE = [ROOT / "workflow" / "Snakefile", ROOT / "workflow" / "rules" / "common.smk"]
CORE_RULE_FILES = sorted(set((ROOT / "workflow" / "rules").glob("*.smk")) - set(CORE))
PAPER_RULE_FILES = [path for paper in papers() for path in paper.rules_files]
IMPORT = re.compile(r"^(?:from\s+\S+\s+import\s+(?:\([^)]*\)|[^\n]+)|import\s+[^\n]+)", re.M)


def bindings(text: str) -> dict[str, str]:
    """The names a rule file binds at its top level, each with what binds it: an import (module and
    name) or the statement's first line (an assignment, a def)."""
    bound = {}
    for statement in IMPORT.findall(text):
        node = ast.parse(statement).body[0]
        module = getattr(node, "module", None)
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            bound[name] = f"import {module}:{alias.name}" if module else f"import {alias.name}"
    for match in re.finditer(r"^(?:def\s+(\w+)|(\w+)\s*=[^=]).*$", text, flags=re.M):
        bound[match.group(1) or match.group(2)] = match.group(0).strip()
    return bound


def names_read(text: str) -> set[str]:
    """Every name a rule file reads (outside comments and keyword arguments), f-strings' fields included."""
    names = set()
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.NL]
    for token, after in zip(tokens, [*tokens[1:], None]):
        if token.type == tokenize.NAME and not (after and after.string == "=" and token.start[1] > 0):
            names.add(token.string)  # a keyword argument's name (settings=...) reads nothing
        elif token.type == tokenize.STRING and re.match(r"[rRbB]?[fF]", token.string):
            for field in re.findall(r"(?<!\{)\{([^{}]+)\}", token.string):
                names |= set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", field))
    return names


def foreign_names(files: dict[str, str], core: set[str]) -> dict[str, set[str]]:
    """Per file, the names it reads that another file defines and it does not (nor the core)."""
    bound = {name: set(bindings(text)) for name, text in files.items()}
    return {
        name: found
        for name, text in files.items()
        if (
            found := (names_read(text) - bound[name] - core)
            & set().union(*(other for key, other in bound.items() if key != name))
        )
    }


def clashes(files: dict[str, str]) -> dict[str, set[str]]:
    """The names two files bind with different statements, with those statements."""
    seen: dict[str, set[str]] = {}
    for text in files.values():
        for name, statement in bindings(text).items():
            seen.setdefault(name, set()).add(statement)
    return {name: statements for name, statements in seen.items() if len(statements) > 1}


def rule_files() -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text() for path in [*CORE_RULE_FILES, *PAPER_RULE_FILES]}


def core_names() -> set[str]:
    return set().union(*(bindings(path.read_text()) for path in CORE))


def test_no_rule_file_reads_a_name_another_defines():
    assert foreign_names(rule_files(), core_names()) == {}


def test_a_name_two_rule_files_define_is_the_same_statement():
    assert clashes(rule_files()) == {}


def test_the_papers_rule_files_need_no_alias():
    aliased = {
        str(path.relative_to(ROOT)): statement
        for path in PAPER_RULE_FILES
        for statement in IMPORT.findall(path.read_text())
        if re.search(r"\bas\b", statement)
    }
    assert aliased == {}


def test_the_checks_see_a_foreign_name_and_a_clash():
    first = 'from a.settings import PHASE_DIR\nX = SETTINGS["p"]\n\nrule r:\n    output:\n        f"{PHASE_DIR}/x"\n'
    second = 'X = SETTINGS["q"]\n\nrule s:\n    input:\n        f"{PHASE_DIR}/x",\n    params:\n        n=len(X),\n'
    assert foreign_names({"first": first, "second": second}, {"SETTINGS"}) == {"second": {"PHASE_DIR"}}
    assert clashes({"first": first, "second": second}) == {"X": {'X = SETTINGS["p"]', 'X = SETTINGS["q"]'}}
    assert foreign_names({"first": first, "second": "from a.settings import PHASE_DIR\n" + second}, set()) == {}
