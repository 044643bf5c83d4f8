"""The container backends (issue 28, item 1): ``--sandbox podman`` runs every command in one
container per sandbox, from a scenario's own image (``sandbox.image``) or the host's runtime.

A tiny image is built offline (``FROM scratch``, a static busybox, a ``/bin/bash`` that execs
``sh``). Commands run in it as the sandbox uid, without network or capabilities, within the
limits (a fork bomb and a memory hog are stopped), are killed at their timeout with what they
started, and share the workspace with the host. A second build of the same context is a cache
hit. A scenario whose test needs a program only its image has passes with the oracle and fails
with echo under podman, and cannot pass under bwrap (its image not used, recorded so). Closed
sandboxes, and those of a harness killed outright, leave no container.

Skipped where podman cannot start containers, except in CI, where it must.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.grading.evaluators.llm_judge import JudgeChoice
from harness.sandbox import Limits, SandboxClosed, SandboxSpec, SandboxUnavailable, open_sandbox, resolve_mode
from harness.sandbox import container
from harness.sandbox.images import ImageError, build_image, context_hash
from harness.scenarios.loading import load_scenario, resolve_prompt
from harness.scenarios.model import ScenarioError
from harness.testing.results import MemoryResults
from support.scenario_builders import make_scenario
from support.containers import static_busybox

pytestmark = pytest.mark.integration

BASH = "#!/bin/sh\nexec /bin/sh \"$@\"\n"
ONLYHERE = "#!/bin/sh\n# a program only the scenario's image has\ngrep -qx right \"$1\"\n"


def _podman_problem() -> str | None:
    problem = container.probe("podman")
    if problem is None and static_busybox() is None:
        problem = "no statically linked busybox to build the test image from (apt-get install busybox-static)"
    return problem


@pytest.fixture(scope="module")
def podman():
    """The podman runtime (skipped where it cannot run, except in CI, where it must)."""
    problem = _podman_problem()
    if problem is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must run the podman sandbox: {problem}")
        pytest.skip(problem)
    return container.detect_runtime("podman")


def busybox_context(folder: Path, extra: dict[str, str] | None = None, note: str = "") -> Path:
    """A build context: a static busybox, a /bin/bash that execs sh, and ``extra`` files
    (path in the image -> text, made executable)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(static_busybox(), folder / "busybox")
    (folder / "bash").write_text(BASH)
    os.chmod(folder / "bash", 0o755)
    lines = ["FROM scratch", "COPY busybox /bin/busybox", 'RUN ["/bin/busybox", "--install", "-s", "/bin"]',
             "COPY bash /bin/bash", "ENV PATH=/usr/local/bin:/usr/bin:/bin"]
    for i, (target, text) in enumerate((extra or {}).items()):
        (folder / f"extra{i}").write_text(text)
        os.chmod(folder / f"extra{i}", 0o755)
        lines.append(f"COPY extra{i} {target}")
    if note:
        lines.append(f"LABEL org.zebench.test-note={note}")
    (folder / "Containerfile").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def tiny(podman, tmp_path_factory):
    """The tiny image, built offline."""
    return build_image(busybox_context(tmp_path_factory.mktemp("tiny") / "context"), podman)


@pytest.fixture
def boxes():
    """``open_box(workspace, image=None, **spec)``: a podman sandbox, closed after the test."""
    opened = []

    def open_box(workspace, image=None, **spec):
        box = open_sandbox(workspace, SandboxSpec(kind="podman", **spec), image)
        opened.append(box)
        return box

    yield open_box
    for box in opened:
        box.close()


def _listed(name: str) -> list[str]:
    runtime = container.detect_runtime("podman")
    done = runtime.call("ps", "--all", "--filter", f"name=^{name}$", "--format", "{{.Names}}")
    return done.stdout.split()


def test_item1_commands_run_in_the_image_as_the_sandbox_uid_without_network_or_capabilities(tiny, boxes, tmp_path):
    box = boxes(tmp_path, tiny)
    result = box.run("id -u; id -g; cat /proc/net/dev; grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status; "
                     "bash -c 'echo from-bash'; echo $HOME $PWD")
    assert result.ok, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [str(box.identity.uid), str(box.identity.gid)] and lines[0] != "0"
    interfaces = {line.split(":")[0].strip() for line in lines if ":" in line and "|" not in line
                  and not line.startswith(("CapEff", "CapBnd", "NoNewPrivs"))}
    assert interfaces == {"lo"}  # --network none: loopback only
    assert "CapEff:\t0000000000000000" in lines and "CapBnd:\t0000000000000000" in lines
    assert "NoNewPrivs:\t1" in lines
    assert "from-bash" in lines and "/home/sandbox /workspace" in lines
    # The root is read-only; only the workspace and the private tmpfs take writes.
    assert not box.run("touch /etc/x").ok and box.run("touch /tmp/x && touch $HOME/x").ok
    info = box.describe()
    assert info["kind"] == "podman" and info["network"] is False and info["workspace"] == "/workspace"
    assert info["image"]["id"] == tiny.id and info["image"]["runtime"] == "image"
    assert info["limits"]["memory"]["enforcedBy"].startswith("container cgroup")


def test_item1_the_workspace_is_shared_with_the_host(tiny, boxes, tmp_path):
    (tmp_path / "from-host.txt").write_text("host")
    box = boxes(tmp_path, tiny)
    result = box.run("cat from-host.txt && echo inside > from-container.txt && mkdir -p sub && echo x > sub/y")
    assert result.ok and result.stdout == "host"
    assert (tmp_path / "from-container.txt").read_text() == "inside\n"
    assert (tmp_path / "sub" / "y").read_text() == "x\n"
    assert box.inner_path(tmp_path / "sub" / "y") == "/workspace/sub/y"
    assert box.host_path("/workspace/sub/y") == tmp_path / "sub" / "y"


def test_item1_a_fork_bomb_is_stopped_by_the_process_limit(tiny, boxes, tmp_path):
    box = boxes(tmp_path, tiny, limits=Limits(max_processes=32, timeout_s=60))
    result = box.run("bomb() { bomb | bomb & }; bomb; sleep 2")
    assert result.killed_by == "processes", result
    after = box.run("ps -o pid,args | grep -c 'sleep 2$' || true")
    assert after.ok and after.stdout.strip() == "0"  # nothing the bomb started is left


def test_item1_a_memory_hog_is_killed_by_the_memory_limit(tiny, boxes, tmp_path):
    box = boxes(tmp_path, tiny, limits=Limits(memory_bytes=64 * 1024 * 1024, timeout_s=60))
    result = box.run('x=aaaaaaaaaaaaaaaa; while :; do x="$x$x"; done')
    assert result.killed_by == "memory" and not result.ok, result
    assert box.run("echo still-here").stdout == "still-here\n"


def test_item1_a_timeout_kills_the_command_and_everything_it_started(tiny, boxes, tmp_path):
    box = boxes(tmp_path, tiny)
    started = time.monotonic()
    result = box.run("sleep 300 & sleep 301", timeout_s=1.5)
    assert result.timed_out and result.exit_code is None and result.killed_by == "timeout"
    assert time.monotonic() - started < 20
    left = box.run("ps -o args | grep -c '^sleep 30[01]' || true")
    assert left.stdout.strip() == "0", left


def test_item1_a_background_process_does_not_outlive_its_command(tiny, boxes, tmp_path):
    box = boxes(tmp_path, tiny)
    assert box.run("sleep 500 >/dev/null 2>&1 &").ok
    left = box.run("ps -o args | grep -c '^sleep 500' || true")
    assert left.stdout.strip() == "0"


def test_item1_file_size_and_output_are_capped(tiny, boxes, tmp_path):
    box = boxes(tmp_path, tiny, limits=Limits(file_size_bytes=1024 * 1024))
    result = box.run("dd if=/dev/zero of=big bs=1024 count=4096")
    assert not result.ok and (tmp_path / "big").stat().st_size <= 1024 * 1024
    loud = box.run("yes | head -c 300000", output_cap=1000)
    assert loud.truncated and len(loud.stdout) < 2000


def test_item1_the_second_build_of_a_context_is_a_cache_hit(podman, tmp_path):
    context = busybox_context(tmp_path / "context", note=os.urandom(6).hex())  # never built before
    first = build_image(context, podman)
    try:
        again = build_image(context, podman)
        assert first.built and not again.built
        assert again.id == first.id and again.tag == first.tag and again.context_hash == context_hash(context)
        (context / "added.txt").write_text("a change of content is a new image\n")
        changed = build_image(context, podman)
        assert changed.built and changed.tag != first.tag
        podman.call("rmi", changed.tag)
        with pytest.raises(ImageError, match="no Containerfile or Dockerfile"):
            build_image(tmp_path, podman)
    finally:
        podman.call("rmi", first.tag)  # one-off images: not left in the store


def test_item1_a_closed_sandbox_refuses_commands_and_leaves_no_container(tiny, tmp_path):
    box = open_sandbox(tmp_path, SandboxSpec(kind="podman"), tiny)
    assert box.run("true").ok
    assert _listed(box.name) == [box.name]
    box.close()
    with pytest.raises(SandboxClosed):
        box.run("true")
    container.wait_for_removals()
    assert _listed(box.name) == []
    unused = open_sandbox(tmp_path, SandboxSpec(kind="podman"), tiny)
    unused.close()  # no command: no container was ever started
    assert _listed(unused.name) == []


KILLED_HARNESS = """\
import os, signal
from harness.sandbox import SandboxSpec, open_sandbox
box = open_sandbox({workspace!r}, SandboxSpec(kind="podman"))
box.run("true")
print(box.name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_item1_the_sweep_removes_the_containers_of_a_killed_harness(podman, tmp_path):
    from harness.leftovers import sweep

    script = KILLED_HARNESS.format(workspace=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    name = done.stdout.strip()
    assert name.startswith("zebench-p") and _listed(name) == [name]
    report = sweep()
    assert f"container {name}" in report.removed
    deadline = time.monotonic() + 30
    while _listed(name) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _listed(name) == []


def test_item1_without_an_image_the_host_runtime_is_mounted_read_only(podman, boxes, tmp_path):
    box = boxes(tmp_path)
    result = box.run("python3 -c 'import sys; print(sys.executable)'; test -r /etc/shadow && cat /etc/shadow; "
                     "touch /usr/x 2>/dev/null || echo read-only")
    assert result.ok, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == os.path.join(os.path.dirname(sys.executable), "python3")  # the harness's interpreter
    assert lines[-1] == "read-only" and not any(":$" in line for line in lines)  # shadow masked (empty)
    assert box.describe()["image"]["runtime"] == "host"


def test_item1_podman_options_this_machine_needs_are_detected(podman, tmp_path, monkeypatch):
    """A podman whose default runtime refuses containers (as crun does with cgroups in hybrid
    mode) is run with runc and cgroupfs: a wrapper plays that podman over the real one."""
    if shutil.which("runc") is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must test the runc fallback: scripts/setup.sh installs runc")
        pytest.skip("runc is not installed")
    fake = tmp_path / "podman"
    fake.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case " $* " in
          *" --runtime "*) ;;
          *" run "*) echo "Error: crun: cgroups in hybrid mode not supported: OCI runtime error" >&2; exit 126 ;;
        esac
        exec {podman.executable} "$@"
        """))
    fake.chmod(0o755)
    monkeypatch.setenv("ZE_BENCHMARKS_PODMAN", str(fake))
    container.probe_clear()
    try:
        detected = container.detect_runtime("podman")
        assert "--runtime" in detected.options and "cgroupfs" in detected.options
        assert any("runc with cgroupfs" in note for note in detected.notes)
        assert resolve_mode("podman").kind == "podman"
    finally:
        monkeypatch.delenv("ZE_BENCHMARKS_PODMAN")
        container.probe_clear()


def test_item1_a_missing_container_program_is_said_by_name(monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_DOCKER", "")
    monkeypatch.setattr(container, "container_executable", lambda kind: None)
    container.probe_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="docker is not installed"):
            resolve_mode("docker")
    finally:
        container.probe_clear()


# --------------------------------------------------------------------------- scenarios' images

IMAGE_YAML = """\
id: needs-its-image
timeout_minutes: 5
sandbox:
  image: image
validation:
  commands:
    test: onlyhere answer.txt
"""


@pytest.fixture
def image_scenario(podman, tmp_path):
    suites = tmp_path / "suites"
    scen = make_scenario(suites, name="needs-its-image", yaml_text=IMAGE_YAML, fixture={"answer.txt": "wrong\n"},
                         solution={"answer.txt": "right\n"})
    busybox_context(scen / "image", {"/usr/local/bin/onlyhere": ONLYHERE})
    scenario = load_scenario("demo", "needs-its-image", suites)
    return scenario, resolve_prompt(scenario, "L1"), tmp_path / "ws"


def _run(image_scenario, agent, sandbox):
    from harness.scenarios.runner import RunOptions, run_batch

    scenario, prompt, ws_root = image_scenario
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent=agent, sandbox=sandbox, workspaces_root=ws_root,
                                                 judge=JudgeChoice("none"), skip_warmup=True), store)
    (run,) = out.runs
    return store.runs[run.record.run_id], out


def test_item1_a_scenario_in_its_own_image_passes_with_the_oracle_and_fails_with_echo(image_scenario):
    scenario, _, _ = image_scenario
    assert scenario.environment == (scenario.path / "image").resolve()
    oracle, out = _run(image_scenario, "oracle", "podman")
    assert (oracle.status, oracle.is_successful) == ("completed", True), oracle.metadata.get("error")
    image = oracle.metadata["sandbox"]["image"]
    assert oracle.metadata["sandbox"]["kind"] == "podman" and image["runtime"] == "image"
    assert image["contextHash"] == context_hash(scenario.environment) and image["id"]
    assert oracle.metadata["configParts"]["sandbox"] == f"podman image {image['contextHash'][:20]}"
    assert out.sandbox == "podman" and out.batch.metadata["sandbox"] == "podman"
    echo, _ = _run(image_scenario, "echo", "podman")
    assert (echo.status, echo.failure_class) == ("failed", "validation")
    assert echo.metadata["configParts"]["sandbox"] == oracle.metadata["configParts"]["sandbox"]


def test_item1_auto_runs_a_scenario_that_declares_an_image_in_a_container(image_scenario):
    oracle, _ = _run(image_scenario, "oracle", "auto")
    assert oracle.is_successful and oracle.metadata["sandbox"]["kind"] == "podman"


def test_item1_under_bwrap_the_image_is_not_used_and_the_scenario_cannot_pass(image_scenario):
    host = resolve_mode("auto").kind  # bwrap where it works, else none
    oracle, _ = _run(image_scenario, "oracle", host)
    assert not oracle.is_successful and oracle.status == "error" and oracle.failure_class == "infra"
    assert "onlyhere" in oracle.metadata["error"]
    declared = oracle.metadata["sandbox"]["image"]
    assert declared["used"] is False and declared["declared"].endswith("/image")
    assert oracle.metadata["configParts"]["sandbox"] == host


def test_item1_auto_refuses_a_scenario_with_an_image_where_no_container_backend_works(image_scenario, monkeypatch):
    monkeypatch.setattr(container, "probe", lambda kind: f"{kind} is not installed (test)")
    oracle, out = _run(image_scenario, "oracle", "auto")
    assert (oracle.status, oracle.failure_class) == ("error", "infra")
    assert "demo/needs-its-image cannot run here" in oracle.metadata["error"]
    assert "no container backend works here" in oracle.metadata["error"] and out.preflight_error


def test_item1_grading_runs_in_a_fresh_container_of_the_image(image_scenario, tmp_path):
    from harness.grading.copy import GradingSession
    from harness.sandbox import build_environment, choose_environment

    scenario, _, _ = image_scenario
    image = build_environment(choose_environment("podman", scenario.environment))
    workspace = tmp_path / "agent-ws"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("right\n")
    with open_sandbox(workspace, SandboxSpec(kind="podman"), image) as agent_box:
        assert agent_box.run("echo planted > /tmp/left-by-agent && sleep 600 >/dev/null 2>&1 &").ok
        with GradingSession(scenario, workspace, "podman", tmp_path / "grading", image=image) as grading:
            box = grading.sandbox
            assert box.name != agent_box.name and box.workspace != agent_box.workspace
            result = box.run("test ! -e /tmp/left-by-agent && onlyhere answer.txt && ps -o args | grep -c '^sleep 600'")
            assert result.stdout.strip() == "0" and result.exit_code == 1  # grep found none: nothing carried over


def test_item1_sandbox_image_must_name_a_build_context(tmp_path):
    suites = tmp_path / "suites"
    make_scenario(suites, name="no-dir", yaml_text=IMAGE_YAML)
    with pytest.raises(ScenarioError, match=r"scenario.yaml: sandbox.image: directory not found"):
        load_scenario("demo", "no-dir", suites)
    scen = make_scenario(suites, name="no-file", yaml_text=IMAGE_YAML)
    (scen / "image").mkdir()
    with pytest.raises(ScenarioError, match=r"sandbox.image: .* holds no Containerfile or Dockerfile"):
        load_scenario("demo", "no-file", suites)
    make_scenario(suites, name="not-text", yaml_text=IMAGE_YAML.replace("image: image", "image: 3"))
    with pytest.raises(ScenarioError, match=r"sandbox.image"):
        load_scenario("demo", "not-text", suites)


def test_item1_a_context_lists_host_files_to_copy_in_and_a_missing_one_is_named(podman, tmp_path):
    from harness.sandbox.images import HOST_FILES

    context = tmp_path / "context"
    context.mkdir()
    (context / "Containerfile").write_text(
        f"# {os.urandom(6).hex()}\nFROM scratch\nCOPY tool /bin/busybox\nRUN [\"/bin/busybox\", \"true\"]\n")
    (context / HOST_FILES).write_text(f"# a static busybox of this machine\n{static_busybox()} tool\n")
    image = build_image(context, podman)
    try:
        assert image.built and not (context / "tool").exists()  # copied into a temporary context only
        assert build_image(context, podman).id == image.id  # its content is part of the cache key
        rebuilt = build_image(context, podman, rebuild=True)
        assert rebuilt.built
    finally:
        podman.call("rmi", "-f", image.tag)
    (context / HOST_FILES).write_text("/nonexistent/busybox\n")
    with pytest.raises(ImageError, match=r"zebench-host-files:1: /nonexistent/busybox is not on this machine"):
        build_image(context, podman)


def test_item1_no_build_cache_reaches_the_image_build(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from harness.scenarios import runner
    from harness.cli.bench import main
    from support.scenario_builders import make_scenario

    make_scenario(tmp_path / "suites", yaml_text="id: x\nsandbox:\n  image: env\nvalidation:\n  commands:\n    test: 'true'\n",
                  extra={"env/Containerfile": "FROM scratch\n"})
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    asked = []

    def build(choice, rebuild=False):
        asked.append(rebuild)
        raise runner.SandboxUnavailable("not built in this test")

    monkeypatch.setattr(runner, "build_environment", build)
    monkeypatch.setattr(runner, "scenario_environment",
                        lambda scenario, mode: runner.EnvironmentChoice("podman", scenario.environment, "d"))
    for flags in ([], ["--no-build-cache"]):
        CliRunner().invoke(main, ["demo", "add-one", "--agent", "echo", "--sandbox", "bwrap", *flags])
    assert asked == [False, True]


def test_item2_the_shipped_harbor_tasks_separate_oracle_from_echo_in_their_own_images(podman, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from harness.cli.bench import main

    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    tasks = Path(__file__).resolve().parents[1] / "examples" / "harbor-tasks"
    result = CliRunner().invoke(main, [str(tasks), "--agent", "oracle", "--agent", "echo", "--sandbox", "podman",
                                       "--judge", "none", "--batch-id", "harbor", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(CliRunner().invoke(main, ["history", "--batch-id", "harbor", "--json"]).output)
    outcome = {(r["scenario"], r["agent"]): r["isSuccessful"] for r in listed}
    assert len(outcome) == 6
    assert all(ok for (_, agent), ok in outcome.items() if agent == "oracle")
    assert not any(ok for (_, agent), ok in outcome.items() if agent == "echo")
    shown = json.loads(CliRunner().invoke(main, ["show", listed[0]["runId"], "--json"]).output)
    assert shown["metadata"]["sandbox"]["kind"] == "podman" and shown["metadata"]["sandbox"]["image"]["tag"]


def test_item2_a_harbor_task_naming_its_workdir_passes_with_the_oracle_under_podman(podman, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from harness.cli.bench import main

    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    shipped = Path(__file__).resolve().parents[1] / "examples" / "harbor-tasks" / "fix-greeting"
    tasks = tmp_path / "tasks"
    task = tasks / "greet-at-app"
    shutil.copytree(shipped, task)
    # The verifier and the solution name the image's WORKDIR (/app) by its absolute path, as
    # Harbor tasks do; the verifier runs from elsewhere, so only the absolute path finds the file.
    (task / "tests" / "test.sh").write_text((task / "tests" / "test.sh").read_text().replace(
        "sh greet.sh", "cd / && sh /app/greet.sh"))
    (task / "solution" / "solve.sh").write_text((task / "solution" / "solve.sh").read_text().replace(
        "cat > greet.sh", "test \"$(pwd)\" = /app && cat > /app/greet.sh"))
    result = CliRunner().invoke(main, [str(tasks), "--agent", "oracle", "--agent", "echo", "--sandbox", "podman",
                                       "--judge", "none", "--batch-id", "workdir", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(CliRunner().invoke(main, ["history", "--batch-id", "workdir", "--json"]).output)
    outcome = {r["agent"]: r for r in listed}
    assert outcome["oracle"]["isSuccessful"] and not outcome["echo"]["isSuccessful"]
    shown = json.loads(CliRunner().invoke(main, ["show", outcome["oracle"]["runId"], "--json"]).output)
    sandbox = shown["metadata"]["sandbox"]
    assert sandbox["workspace"] == "/app" and sandbox["image"]["workdir"] == "/app"


def test_item2_a_workdir_that_would_hide_the_system_or_the_private_directories_is_not_used():
    from harness.sandbox.images import ContainerImage

    def image(workdir):
        return ContainerImage("podman", "t", "i", "h", context=Path("/ctx"), workdir=workdir)

    assert container.workspace_point(image("/app")) == ("/app", None)
    assert container.workspace_point(image("/usr/src/app/")) == ("/usr/src/app", None)
    assert container.workspace_point(image(None)) == ("/workspace", None)
    for bad in ("/usr", "/tmp/x", "/home", "/proc/1", "/", "relative"):
        point, why = container.workspace_point(image(bad))
        assert point == "/workspace" and why, bad
    assert container.workspace_point(image("/tests/app"), ["/tests"])[0] == "/workspace"
    host = ContainerImage("podman", "t", "i", "h", workdir="/app")  # the host-runtime image: always /workspace
    assert container.workspace_point(host) == ("/workspace", None)


def test_tmp_and_home_are_emptied_between_commands_but_a_host_directory_mounted_in_tmp_is_not(podman, boxes,
                                                                                             tmp_path):
    from harness.sandbox import Mount

    shared = tmp_path / "host-dir"  # below the host's /tmp: mounted at its own path, under the container's /tmp
    shared.mkdir()
    (shared / "kept.txt").write_text("host data\n")
    os.chmod(shared, 0o777)
    os.chmod(shared / "kept.txt", 0o666)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    box = boxes(workspace, mounts=(Mount(shared, writable=True),))
    inner = box.mount_point(Mount(shared))
    assert inner.startswith("/tmp/")
    assert box.run(f"echo x > /tmp/left && echo y > $HOME/.left && echo z >> {inner}/kept.txt").ok
    after = box.run(f"ls -A /tmp $HOME; cat {inner}/kept.txt")
    assert "left" not in after.stdout and ".left" not in after.stdout
    assert (shared / "kept.txt").read_text() == "host data\nz\n" and "host data" in after.stdout
    assert box.describe()["runtime"]["exec"] in ("runc exec", "podman exec")
