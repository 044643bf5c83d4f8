"""What ``bench [SUITE [SCENARIO...]]`` names: the words and ``--scenarios``/``--all`` turned
into suites, scenario names and the suites directory (:func:`selection`). SUITE is a suite's
name, or a path: a directory of Harbor tasks, one such task, a suite directory or a file of
SWE-bench instances (:func:`suite_at`). A word that is neither a suite nor a command is exit 2
with the closest commands and suites (:func:`unknown_word`). Also the run command's comma lists
(:func:`split`).
"""

from __future__ import annotations

from pathlib import Path

from harness.cli.errors import fail


def split(values: tuple[str, ...] | list[str] | str | None) -> list[str]:
    """``("a,b", "c")`` -> ``["a", "b", "c"]`` (comma lists and repeated options alike)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        for item in value.split(","):
            if item.strip() and item.strip() not in out:
                out.append(item.strip())
    return out


def selection(targets: tuple[str, ...], all_suites: bool, scenario_list: str | None,
              suites_dir: Path | None) -> tuple[list[str] | None, list[str], Path | None]:
    """(suites, scenario names, suites directory) from the words given; exit 2 with a suggestion
    for a word that is neither a suite nor a command. SUITE may be a path: a directory of Harbor
    tasks, one task of it, or a suite directory (see :func:`suite_at`)."""
    names = list(targets[1:]) + split(scenario_list)
    if all_suites:
        if targets or names:
            fail("--all runs every suite: give no SUITE or scenarios with it")
        return None, [], suites_dir
    if not targets:
        fail("give a SUITE to run (see `bench list`), or --all for every suite; `bench --help` shows the commands")
    from harness.scenarios.loading import discover_suites
    from harness.scenarios.model import ScenarioError

    word = targets[0]
    if is_path(word):
        return path_selection(word, names)
    try:
        known = [s.name for s in discover_suites(suites_dir)]
    except ScenarioError as exc:
        if Path(word).is_dir():
            return path_selection(word, names)
        fail(str(exc))
    if word not in known:
        if Path(word).is_dir():
            return path_selection(word, names)
        fail(unknown_word(word, known))
    return [word], names, suites_dir


def is_path(word: str) -> bool:
    """A SUITE written as a path rather than a name (``./tasks``, ``~/tb``, ``a/b``, ``x.jsonl``)."""
    return "/" in word or word in (".", "..") or word.startswith("~") or word.lower().endswith((".jsonl", ".json"))


def suite_at(word: str) -> tuple[Path, str, str | None]:
    """(suites directory, suite, scenario or None) of a suite given by its path; exit 2 naming
    the path when it holds no suite."""
    from harness.tasks import locate_suite

    where = locate_suite(word)
    if where is None:
        from harness.scenarios.loading import discover_suites
        from harness.scenarios.model import ScenarioError

        found = Path(word).expanduser()
        try:
            held = [s.name for s in discover_suites(found)] if found.is_dir() else []
        except ScenarioError:
            held = []
        if not found.exists():
            why = "no such file" if word.lower().endswith((".jsonl", ".json")) else "no such directory"
        elif not found.is_dir():
            why = "not a suite: a file of SWE-bench instances is named *.jsonl or *.json"
        elif held:
            why = f"a directory of suites ({', '.join(held)}): give one of them, or --suites-dir {word} SUITE"
        else:
            why = ("not a suite: neither a directory of Harbor tasks (each holding task.toml), nor one such task, "
                   "nor a suite directory holding scenarios/, nor a .jsonl file of SWE-bench instances")
        fail(f"{word}: {why}")
    return where.root, where.suite, where.scenario


def path_selection(word: str, names: list[str]) -> tuple[list[str], list[str], Path]:
    root, suite, scenario = suite_at(word)
    return [suite], ([scenario] if scenario else []) + names, root


def unknown_word(word: str, suites: list[str]) -> str:
    """``'bach' is neither a command nor a suite; did you mean `bench batch`?``"""
    from harness.cli.bench import main
    from harness._util.suggest import closest

    commands = [c for c in main.commands if c != "run"]
    pool = {**{c: f"`bench {c}` (a command)" for c in commands}, **{s: f"`bench {s}` (a suite)" for s in suites}}
    near: list[str] = []
    while len(near) < 2:  # the two closest, best first
        found = closest(word, [p for p in pool if p not in near], cutoff=0.6)
        if found is None:
            break
        near.append(found)
    hint = f"; did you mean {' or '.join(pool[n] for n in near)}?" if near else "."
    return (f"{word!r} is neither a command nor a suite{hint} Suites: {', '.join(suites) or 'none'}; "
            f"commands: {', '.join(sorted(commands))}.")
