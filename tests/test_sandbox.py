"""The sandbox around agent tools: confinement, secrets, runaway processes and output."""

from __future__ import annotations

import os
import time

import pytest

from harness.tools import Toolset


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.txt").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside secret\n")
    return root


@pytest.mark.parametrize("path", ["../secret.txt", "a/../../secret.txt", "/etc/passwd", "/", ".."])
def test_paths_outside_the_workspace_are_refused_for_every_file_tool(ws, path):
    tools = Toolset(ws)
    for name, args in [
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "pwned"}),
        ("list_directory", {"path": path}),
    ]:
        res = tools.execute(name, args)
        assert res.is_error and "outside the workspace" in res.content, (name, path, res.content)
    assert (ws.parent / "secret.txt").read_text() == "outside secret\n"


def test_absolute_path_inside_the_workspace_is_allowed(ws):
    assert Toolset(ws).execute("read_file", {"path": str(ws / "ok.txt")}).content == "inside\n"


def test_symlinks_pointing_out_are_refused(ws):
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    os.symlink(ws.parent, ws / "escape")
    tools = Toolset(ws)
    assert tools.execute("read_file", {"path": "link.txt"}).is_error
    assert tools.execute("read_file", {"path": "escape/secret.txt"}).is_error
    assert tools.execute("write_file", {"path": "escape/new.txt", "content": "x"}).is_error
    assert tools.execute("write_file", {"path": "link.txt", "content": "x"}).is_error
    assert tools.execute("list_directory", {"path": "escape"}).is_error
    assert not (ws.parent / "new.txt").exists()
    assert (ws.parent / "secret.txt").read_text() == "outside secret\n"


def test_symlink_inside_the_workspace_is_followed(ws):
    os.symlink("ok.txt", ws / "alias.txt")
    assert Toolset(ws).execute("read_file", {"path": "alias.txt"}).content == "inside\n"


def test_api_keys_are_not_visible_to_run_command(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", "worker-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-secret")
    res = Toolset(ws).execute("run_command", {"command": "env"})
    assert "exit code: 0" in res.content
    for secret in ("sk-ant-secret", "sk-openai-secret", "worker-secret", "gh-secret", "_API_KEY"):
        assert secret not in res.content


def test_a_forked_sleeping_child_is_killed_with_the_command(ws):
    marker = ws / "child.pid"
    res = Toolset(ws, command_timeout_s=2).execute(
        "run_command", {"command": f"sh -c 'echo $$ > {marker}; sleep 300' & sleep 300"}
    )
    assert res.is_error and "timed out" in res.content
    pid = int(marker.read_text().strip())
    for _ in range(50):  # the kernel may take a moment to reap the group
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"child {pid} survived the command's timeout")


def test_a_background_child_does_not_outlive_a_finished_command(ws):
    marker = ws / "bg.pid"
    res = Toolset(ws).execute("run_command", {"command": f"(sleep 300 >/dev/null 2>&1 & echo $! > {marker}) ; echo done"})
    assert "exit code: 0" in res.content
    pid = int(marker.read_text().strip())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"background child {pid} survived")


@pytest.mark.integration
def test_a_command_printing_100_mb_is_contained(ws):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = Toolset(ws, command_output_cap=64 * 1024).execute(
        "run_command", {"command": "head -c 100000000 /dev/zero | tr '\\0' 'a'"}
    )
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert "exit code: 0" in res.content
    assert len(res.content) < 100 * 1024
    assert "bytes omitted" in res.content
    # ru_maxrss is in KiB on Linux; holding the output would need ~100 MB more.
    assert after - before < 50 * 1024
