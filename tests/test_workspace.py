"""Fixture copies that never touch the fixture, exclusions, and the workspace diff."""

from __future__ import annotations

import json
import os
import subprocess

from harness.scenarios.loading import load_scenario
from harness.scenarios.workspace import compute_diff, copy_tree, create_workspace, overlay
from support.scenario_builders import make_scenario, write_tree


def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_writes_in_workspace_never_change_the_fixture(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n", "sub/d.bin": b"\0\1\2" * 1000,
                         "e.txt": "epsilon\n"})
    before = _snapshot(fixture)
    ws = tmp_path / "ws"
    copy_tree(fixture, ws)
    # Every way an agent or its commands may write: append, in-place r+, truncate, rewrite, sed -i, rm.
    with open(ws / "a.txt", "a") as f:
        f.write("appended\n")
    with open(ws / "b.txt", "r+") as f:
        f.write("BETA")
    with open(ws / "sub/d.bin", "r+b") as f:
        f.truncate(3)
    (ws / "c.txt").write_text("rewritten\n")
    subprocess.run(["sh", "-c", "echo more >> e.txt && sed -i s/epsilon/EPS/ e.txt && chmod 000 a.txt"], cwd=ws, check=True)
    os.remove(ws / "b.txt")
    assert _snapshot(fixture) == before
    assert all(os.stat(fixture / p).st_ino != os.stat(ws / p).st_ino for p in ("c.txt", "e.txt"))


def test_copy_skips_node_modules_git_build_output_and_excluded_globs(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {
        "src/app.js": "x", "README.md": "r", "docs/README.md": "r2", "node_modules/pkg/index.js": "m",
        ".git/HEAD": "ref", "dist/app.js": "built", "pkg/__pycache__/m.pyc": "c", "notes/secret.txt": "s",
        "keep.md": "k",
    })
    ws = tmp_path / "ws"
    report = copy_tree(fixture, ws, ["README.md", "notes/**"])
    assert sorted(_snapshot(ws)) == ["keep.md", "src/app.js"]
    assert report.files == 2


def test_executable_bit_is_kept(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {"run.sh": "#!/bin/sh\necho hi\n"})
    os.chmod(fixture / "run.sh", 0o755)
    copy_tree(fixture, tmp_path / "ws")
    assert os.access(tmp_path / "ws" / "run.sh", os.X_OK)


def test_symlinks_leaving_the_fixture_are_not_copied(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {"real.txt": "r"})
    (tmp_path / "outside.txt").write_text("o")
    os.symlink("real.txt", fixture / "inner-link")
    os.symlink("../outside.txt", fixture / "escaping-link")
    os.symlink(str(fixture / "real.txt"), fixture / "absolute-link")
    ws = tmp_path / "ws"
    report = copy_tree(fixture, ws)
    assert os.readlink(ws / "inner-link") == "real.txt"
    assert not os.path.lexists(ws / "escaping-link") and not os.path.lexists(ws / "absolute-link")
    assert sorted(report.skipped_links) == ["absolute-link", "escaping-link"]


def test_create_workspace_names_directory_after_suite_and_scenario(tmp_path):
    make_scenario(tmp_path / "suites")
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    ws = create_workspace(scenario, tmp_path / "results" / "workspaces")
    other = create_workspace(scenario, tmp_path / "results" / "workspaces")
    assert ws.path.parent == (tmp_path / "results" / "workspaces").resolve()
    assert ws.path.name.startswith("demo-add-one-") and ws.path != other.path
    assert (ws.path / "calc.py").read_text() == (scenario.fixture_dir / "calc.py").read_text()
    ws.remove()
    assert not ws.path.exists() and other.path.exists()


def test_diff_lists_changes_and_unified_patch(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {"calc.py": "def f():\n    return 2\n", "old.txt": "gone\n", "logo.png": b"\x89PNG\0\0",
                         "README.md": "excluded from copy\n"})
    ws = tmp_path / "ws"
    copy_tree(fixture, ws, ["README.md"])
    (ws / "calc.py").write_text("def f():\n    return 1\n")
    (ws / "old.txt").unlink()
    (ws / "new.txt").write_text("hello")
    (ws / "logo.png").write_bytes(b"\x89PNG\0\1")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "x.js").write_text("ignored")
    diff = compute_diff(fixture, ws, ["README.md"])
    assert diff.added == ["new.txt"]
    assert diff.modified == ["calc.py", "logo.png"]
    assert diff.deleted == ["old.txt"]
    assert "--- a/calc.py\n+++ b/calc.py" in diff.patch
    assert "-    return 2\n+    return 1\n" in diff.patch
    assert "+++ b/new.txt" in diff.patch and "--- /dev/null" in diff.patch
    assert "Binary files a/logo.png and b/logo.png differ" in diff.patch
    assert not diff.truncated


def test_unchanged_workspace_has_empty_diff(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {"a.py": "x = 1\n"})
    copy_tree(fixture, tmp_path / "ws")
    diff = compute_diff(fixture, tmp_path / "ws")
    assert diff.is_empty and diff.patch == ""


def test_diff_is_capped(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {f"f{i}.txt": "a\n" for i in range(20)})
    ws = tmp_path / "ws"
    copy_tree(fixture, ws)
    for i in range(20):
        (ws / f"f{i}.txt").write_text("b\n" * 200)
    diff = compute_diff(fixture, ws, max_bytes=1000)
    assert diff.truncated and len(diff.modified) == 20
    assert len(diff.patch) < 1200
    assert "more changed file(s) not shown" in diff.patch


def test_diff_reports_dependency_changes(tmp_path):
    fixture = tmp_path / "fixture"
    write_tree(fixture, {
        "package.json": json.dumps({"dependencies": {"react": "^18.2.0", "xterm": "^5.0.0"}}),
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["requests>=2.0"]\n',
        "requirements-dev.txt": "pytest==7.0\n",
    })
    ws = tmp_path / "ws"
    copy_tree(fixture, ws)
    (ws / "package.json").write_text(json.dumps({"dependencies": {"react": "^19.0.0", "@xterm/xterm": "^5.5.0"}}))
    (ws / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["requests>=2.31"]\n')
    (ws / "requirements-dev.txt").write_text("pytest==8.0\nrespx\n")
    diff = compute_diff(fixture, ws)
    changes = {(c.file, c.name): (c.before, c.after) for c in diff.dependency_changes}
    assert changes == {
        ("package.json", "@xterm/xterm"): (None, "^5.5.0"),
        ("package.json", "react"): ("^18.2.0", "^19.0.0"),
        ("package.json", "xterm"): ("^5.0.0", None),
        ("pyproject.toml", "requests"): (">=2.0", ">=2.31"),
        ("requirements-dev.txt", "pytest"): ("==7.0", "==8.0"),
        ("requirements-dev.txt", "respx"): (None, ""),
    }


def test_overlay_lays_files_over_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    write_tree(ws, {"calc.py": "old", "keep.py": "k"})
    write_tree(tmp_path / "solution", {"calc.py": "new", "pkg/extra.py": "e"})
    overlay(tmp_path / "solution", ws)
    assert _snapshot(ws) == {"calc.py": b"new", "keep.py": b"k", "pkg/extra.py": b"e"}
