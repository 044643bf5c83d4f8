"""The sandbox seam: both backends, the file tools' confinement, limits and the lifecycle."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from harness.sandbox import Limits, SandboxClosed, SandboxSpec, SandboxUnavailable, open_sandbox, resolve_mode
from harness.sandbox.limits import cgroup_support
from harness.tools import Toolset
from support.processes import alive as _alive
from support.processes import gone as _gone


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.txt").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside secret\n")
    return root


# --------------------------------------------------------------------------- file tools

@pytest.mark.parametrize("path", ["../secret.txt", "a/../../secret.txt", "/etc/passwd", "/", ".."])
def test_paths_outside_the_workspace_are_refused_for_every_file_tool(ws, make_sandbox, path):
    tools = Toolset(make_sandbox(ws))
    for name, args in [
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "pwned"}),
        ("list_directory", {"path": path}),
    ]:
        res = tools.execute(name, args)
        assert res.is_error and "outside the workspace" in res.content, (name, path, res.content)
    assert (ws.parent / "secret.txt").read_text() == "outside secret\n"


def test_absolute_paths_inside_the_workspace_are_allowed_as_host_and_as_sandbox_paths(ws, make_sandbox, sandbox_kind):
    box = make_sandbox(ws, sandbox_kind)
    tools = Toolset(box)
    assert tools.execute("read_file", {"path": str(ws / "ok.txt")}).content == "inside\n"
    assert tools.execute("read_file", {"path": f"{box.inner_workspace}/ok.txt"}).content == "inside\n"


def test_symlinks_pointing_out_are_refused(ws, make_sandbox):
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    os.symlink(ws.parent, ws / "escape")
    tools = Toolset(make_sandbox(ws))
    assert tools.execute("read_file", {"path": "link.txt"}).is_error
    assert tools.execute("read_file", {"path": "escape/secret.txt"}).is_error
    assert tools.execute("write_file", {"path": "escape/new.txt", "content": "x"}).is_error
    assert tools.execute("write_file", {"path": "link.txt", "content": "x"}).is_error
    assert tools.execute("list_directory", {"path": "escape"}).is_error
    assert not (ws.parent / "new.txt").exists()
    assert (ws.parent / "secret.txt").read_text() == "outside secret\n"


def test_symlink_inside_the_workspace_is_followed(ws, make_sandbox):
    os.symlink("ok.txt", ws / "alias.txt")
    assert Toolset(make_sandbox(ws)).execute("read_file", {"path": "alias.txt"}).content == "inside\n"


def test_write_file_never_writes_through_a_hard_link(ws, make_sandbox):
    outside = ws.parent / "secret.txt"
    os.link(outside, ws / "hard.txt")
    res = Toolset(make_sandbox(ws)).execute("write_file", {"path": "hard.txt", "content": "overwritten"})
    assert not res.is_error, res.content
    assert (ws / "hard.txt").read_text() == "overwritten"
    assert outside.read_text() == "outside secret\n"


# --------------------------------------------------------------------------- commands

def test_commands_get_a_clean_environment_without_secrets(ws, make_sandbox, sandbox_kind, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-value")
    monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", "worker-secret-value")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-secret-value")
    monkeypatch.setenv("SOME_HARMLESS_SETTING", "visible-to-nobody")
    result = make_sandbox(ws, sandbox_kind).run("env")
    assert result.ok
    for leaked in ("secret-value", "_API_KEY", "GITHUB_TOKEN", "visible-to-nobody"):
        assert leaked not in result.stdout
    env = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert env["HOME"] != os.environ.get("HOME") and env["TMPDIR"]


def test_a_timed_out_command_is_killed_with_every_child(ws, make_sandbox, sandbox_kind):
    marker = f"sleep 7{os.getpid() % 1000}.25"
    result = make_sandbox(ws, sandbox_kind).run(f"sh -c '{marker}' & {marker}", timeout_s=1)
    assert result.timed_out and result.killed_by == "timeout" and result.exit_code is None
    assert _gone(marker), _alive(marker)


@pytest.mark.parametrize("how", ["background", "setsid", "nohup"])
def test_nothing_a_finished_command_started_outlives_it(ws, make_sandbox, sandbox_kind, how):
    marker = f"sleep 6{os.getpid() % 1000}.{len(how)}5"
    launch = {"background": f"({marker} >/dev/null 2>&1 &);", "setsid": f"setsid {marker} >/dev/null 2>&1 &",
              "nohup": f"nohup {marker} >/dev/null 2>&1 &"}[how]
    started = time.monotonic()
    result = make_sandbox(ws, sandbox_kind).run(f"{launch} echo done")
    assert result.ok and result.stdout.strip() == "done"
    assert time.monotonic() - started < 10  # the detached child did not hold the command open
    assert _gone(marker), _alive(marker)


def test_a_detached_child_holding_the_output_does_not_hold_the_command(ws, make_sandbox, sandbox_kind):
    marker = f"sleep 5{os.getpid() % 1000}.75"
    started = time.monotonic()
    result = make_sandbox(ws, sandbox_kind).run(f"setsid {marker} & echo started", timeout_s=60)
    assert result.ok and "started" in result.stdout
    assert time.monotonic() - started < 10
    assert _gone(marker)


def test_output_is_capped_head_and_tail(ws, make_sandbox):
    result = make_sandbox(ws).run("seq 1 200000", output_cap=1000)
    assert result.truncated and "bytes omitted" in result.stdout
    assert result.stdout.startswith("1\n2\n") and result.stdout.rstrip().endswith("200000")


@pytest.mark.integration
def test_a_command_printing_100_mb_costs_bounded_memory(ws, make_sandbox):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = make_sandbox(ws).run("head -c 100000000 /dev/zero | tr '\\0' 'a'", output_cap=64 * 1024)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert result.ok and result.truncated
    assert len(result.stdout) < 100 * 1024
    assert after - before < 50 * 1024  # KiB: holding the output would need ~100 MB more


def test_the_file_size_limit_stops_a_huge_file(ws, make_sandbox, sandbox_kind):
    box = make_sandbox(ws, sandbox_kind, limits=Limits(file_size_bytes=1024 * 1024))
    if box.enforcement.describe()["fileSize"]["enforcedBy"] is None:
        pytest.skip("prlimit is not installed")
    result = box.run("head -c 5000000 /dev/zero > big.bin; echo $?")
    assert (ws / "big.bin").stat().st_size <= 1024 * 1024
    assert result.stdout.strip() != "0"


def test_the_memory_limit_stops_a_memory_hog(ws, make_sandbox, sandbox_kind):
    box = make_sandbox(ws, sandbox_kind, limits=Limits(memory_bytes=256 * 1024 * 1024))
    if box.enforcement.describe()["memory"]["enforcedBy"] is None:
        pytest.skip("no cgroup and no prlimit: memory is not limited here")
    result = box.run("python3 -c 'x = bytearray(1 << 30); x[::4096] = b\"1\" * len(x[::4096]); print(\"allocated\")'",
                     timeout_s=60)
    assert not result.ok and "allocated" not in result.stdout
    if box.enforcement.describe()["memory"]["enforcedBy"].startswith("cgroup"):
        assert result.killed_by == "memory"


def test_the_process_limit_is_enforced_by_a_cgroup_or_reported_as_not_enforced(ws, make_sandbox, sandbox_kind):
    box = make_sandbox(ws, sandbox_kind, limits=Limits(max_processes=32))
    how = box.describe()["limits"]["processes"]["enforcedBy"]
    if how is None:
        assert os.getuid() == 0 and cgroup_support() is None  # root without cgroups: honestly unenforced
        return
    result = box.run("for i in $(seq 1 100); do sleep 3 & done; wait; echo finished", timeout_s=30)
    assert "fork" in result.stderr.lower() or "resource" in result.stderr.lower() or result.killed_by == "processes"


# --------------------------------------------------------------------------- lifecycle

def test_a_closed_sandbox_refuses_commands_and_tools(ws, make_sandbox, sandbox_kind):
    box = make_sandbox(ws, sandbox_kind)
    tools = Toolset(box)
    box.close()
    with pytest.raises(SandboxClosed):
        box.run("true")
    for name, args in [("run_command", {"command": "touch late.txt"}), ("write_file", {"path": "late.txt", "content": "x"}),
                       ("read_file", {"path": "ok.txt"})]:
        res = tools.execute(name, args)
        assert res.is_error and "the run is over" in res.content
    assert not (ws / "late.txt").exists()


def test_closing_a_sandbox_kills_a_running_command(ws, make_sandbox, sandbox_kind):
    box = make_sandbox(ws, sandbox_kind)
    marker = f"sleep 4{os.getpid() % 1000}.5"
    results = []
    runner = threading.Thread(target=lambda: results.append(box.run(marker, timeout_s=120)))
    runner.start()
    deadline = time.monotonic() + 10
    while not _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    box.close()
    runner.join(timeout=15)
    assert not runner.is_alive() and time.monotonic() - started < 10
    assert results[0].killed_by == "closed"
    assert _gone(marker)


# --------------------------------------------------------------------------- what bwrap hides

def test_bwrap_shows_only_the_runtime_and_the_workspace(ws, make_sandbox, tmp_path):
    pytest.importorskip("harness.sandbox.bwrap")
    from harness.sandbox.bwrap import probe

    if probe() is not None:
        pytest.skip(probe())
    checkout = Path(__file__).resolve().parent.parent
    box = make_sandbox(ws, "bwrap")
    script = (f"pwd; ls {checkout}/suites 2>&1; ls {tmp_path} 2>&1; ls ~ | wc -l; "
              "touch /usr/x 2>&1; touch /x 2>&1; echo hi > /tmp/t && cat /tmp/t; ls /proc | grep -c '^[0-9]'")
    result = box.run(script)
    lines = result.stdout.splitlines()
    assert lines[0] == "/workspace"
    assert "No such file" in result.stdout  # neither the suites nor the test's own directory
    assert "Read-only file system" in result.stdout
    assert "hi" in lines
    assert int(lines[-1]) < 10  # a fresh /proc: the command's own few processes


def test_bwrap_has_no_network_unless_allowed(ws, make_sandbox):
    from harness.sandbox.bwrap import probe

    if probe() is not None:
        pytest.skip(probe())
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        connect = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')\""
        closed = make_sandbox(ws, "bwrap").run(connect)
        assert "connected" not in closed.stdout and "refused" in closed.stderr.lower()
        opened = make_sandbox(ws, "bwrap", network=True).run(connect)
        assert "connected" in opened.stdout, opened.stderr
    finally:
        server.close()


def test_auto_falls_back_to_none_with_a_reason_and_bwrap_mode_refuses(monkeypatch):
    from harness.sandbox import bwrap

    monkeypatch.setenv("ZE_BENCHMARKS_BWRAP", "/nonexistent/bwrap")
    monkeypatch.setattr(bwrap, "bwrap_executable", lambda: None)
    bwrap.probe.cache_clear()
    try:
        choice = resolve_mode("auto")
        assert choice.kind == "none" and "not installed" in choice.fallback_reason
        with pytest.raises(SandboxUnavailable, match="not installed"):
            resolve_mode("bwrap")
        assert resolve_mode("none").fallback_reason is None
        with pytest.raises(ValueError, match="unknown sandbox mode"):
            resolve_mode("lxc")
    finally:
        bwrap.probe.cache_clear()


def test_describe_reports_the_kind_network_and_how_each_limit_is_enforced(ws, make_sandbox, sandbox_kind):
    info = make_sandbox(ws, sandbox_kind).describe()
    assert info["kind"] == sandbox_kind and info["network"] is False
    assert set(info["limits"]) == {"time", "output", "processes", "memory", "fileSize"}
    assert info["limits"]["time"]["enforcedBy"] == "harness timer"


def test_open_sandbox_refuses_an_unknown_kind(ws):
    with pytest.raises(ValueError, match="unknown sandbox kind"):
        open_sandbox(ws, SandboxSpec(kind="lxc"))


# --------------------------------------------------------------------------- cgroup detection

def test_cgroup_v2_is_used_where_the_harness_may_enable_pids_and_memory(tmp_path):
    """The v2 path, on a stand-in for a delegated cgroup directory (this machine may have v1)."""
    from harness.sandbox.limits import Limits as L
    from harness.sandbox.limits import _detect_v2

    group = tmp_path / "user.slice" / "me.scope"
    group.mkdir(parents=True)
    (group / "cgroup.controllers").write_text("cpu io memory pids\n")
    (group / "cgroup.subtree_control").write_text("")
    support = _detect_v2([(str(tmp_path), "cgroup2", ["rw"])], {"unified": "/user.slice/me.scope"})
    assert support is not None and support.version == "v2" and support.controllers == {"pids", "memory"}
    assert (group / "cgroup.subtree_control").read_text() == "+pids +memory"
    made = support.create(L(max_processes=64, memory_bytes=128 * 1024 * 1024))
    (d,) = made.dirs.values()
    assert (d / "pids.max").read_text() == "64" and (d / "memory.max").read_text() == str(128 * 1024 * 1024)
    assert made.procs_files == [str(d / "cgroup.procs")]
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    (d / "pids.events").write_text("max 7\n")
    assert made.oom_kills() == 1 and made.process_limit_hits() == 7


def test_cgroup_v2_without_the_controllers_is_not_used(tmp_path):
    from harness.sandbox.limits import _detect_v2

    (tmp_path / "cgroup.controllers").write_text("cpu io\n")
    assert _detect_v2([(str(tmp_path), "cgroup2", ["rw"])], {"unified": "/"}) is None
    assert _detect_v2([], {"unified": "/"}) is None


def test_cgroup_v1_is_used_per_controller(tmp_path):
    from harness.sandbox.limits import Limits as L
    from harness.sandbox.limits import _detect_v1

    for controller in ("pids", "memory"):
        (tmp_path / controller / "harness").mkdir(parents=True)
    mounts = [(str(tmp_path / "pids"), "cgroup", ["rw", "pids"]), (str(tmp_path / "memory"), "cgroup", ["rw", "memory"])]
    support = _detect_v1(mounts, {"pids": "/harness", "memory": "/harness"})
    assert support is not None and support.controllers == {"pids", "memory"}
    made = support.create(L(max_processes=32, memory_bytes=1 << 30))
    assert (made.dirs["pids"] / "pids.max").read_text() == "32"
    assert (made.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(1 << 30)
    (made.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert made.oom_kills() == 2


# --------------------------------------------------------------------------- who commands run as

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the switch to the sandbox uid happens when bench is root")


@as_root
def test_as_root_commands_and_the_files_they_and_the_tools_make_belong_to_the_sandbox_uid(ws, make_sandbox,
                                                                                        sandbox_kind):
    from harness.sandbox.identity import resolve_identity

    uid, gid = resolve_identity().uid, resolve_identity().gid
    box = make_sandbox(ws, sandbox_kind)
    result = box.run("id -u; id -G; grep CapEff /proc/self/status; touch made.txt; echo x >> ok.txt")
    lines = result.stdout.split()
    # No capability at all under bwrap; process-group confinement keeps only CAP_DAC_READ_SEARCH
    # (bit 2), to reach a runtime and a workspace that may lie where only root can go.
    capabilities = "0000000000000004" if sandbox_kind == "none" else "0000000000000000"
    assert result.ok and lines[0] == str(uid) and lines[1] == str(gid) and lines[-1] == capabilities
    written = Toolset(box).execute("write_file", {"path": "deep/er/new.txt", "content": "x"})
    assert not written.is_error
    for rel in ("made.txt", "ok.txt", "deep", "deep/er", "deep/er/new.txt"):
        assert (ws / rel).stat().st_uid == uid, rel
    assert box.run("echo more >> deep/er/new.txt").ok  # the tool's file is the command's to change
    assert box.describe()["user"] == {**resolve_identity().describe(), **box.identity.describe()}


@as_root
def test_a_sandbox_uid_of_root_or_not_a_number_is_refused_before_anything_runs(monkeypatch):
    from harness.sandbox.identity import UID_ENV, resolve_identity

    for value, message in (("0", "unprivileged uid"), ("nobody", "not a number")):
        monkeypatch.setenv(UID_ENV, value)
        resolve_identity.cache_clear()
        try:
            with pytest.raises(SandboxUnavailable, match=message):
                resolve_mode("none")
        finally:
            monkeypatch.delenv(UID_ENV)
            resolve_identity.cache_clear()


@as_root
def test_another_sandbox_uid_can_be_chosen(ws, make_sandbox, monkeypatch):
    from harness.sandbox.identity import UID_ENV, resolve_identity

    monkeypatch.setenv(UID_ENV, "54321")
    resolve_identity.cache_clear()
    try:
        box = make_sandbox(ws, "none")
        assert box.run("id -u").stdout.strip() == "54321"
        assert box.describe()["user"]["uid"] == 54321
    finally:
        monkeypatch.delenv(UID_ENV)
        resolve_identity.cache_clear()
