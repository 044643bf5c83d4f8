"""The egress relay (harness/sandbox/egress.py): a sandbox without a network reaches its model, and nothing else."""

from __future__ import annotations

import os
import shlex
import socket

import pytest

from harness.sandbox import SandboxSpec, open_sandbox
from harness.sandbox.egress import EgressRelay, Upstream
from harness.scripted import ScriptedServer, parse_script
from support.sockets import accept_in_background

pytestmark = pytest.mark.integration


def _bwrap_problem():
    from harness.sandbox.bwrap import probe

    return probe()


bwrap_only = pytest.mark.skipif(_bwrap_problem() is not None and not os.environ.get("CI"),
                                reason=str(_bwrap_problem()))
REAL_KEY = "sk-real-key-kept-outside-7c1e"

CHAT = """\
import json, os, sys, urllib.request
request = urllib.request.Request(sys.argv[1] + "/chat/completions", headers={
    "Authorization": "Bearer placeholder", "Content-Type": "application/json"},
    data=json.dumps({"model": "m", "messages": [], "tools": [{"type": "function",
                    "function": {"name": "write_file"}}]}).encode())
answer = json.load(urllib.request.urlopen(request, timeout=20))
print("ANSWER", answer["choices"][0]["message"]["content"])
print("KEY SEEN" if any("real-key" in v for v in os.environ.values()) else "NO KEY")
"""

STREAM = """\
import sys, openai
client = openai.OpenAI(base_url=sys.argv[1], api_key="placeholder", max_retries=0)
chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True,
              tools=[{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]))
print("CHUNKS", len(chunks), "".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
"""


@pytest.fixture
def relayed(tmp_path):
    """(sandbox, relay, scripted server): a bwrap sandbox whose only way out is the relay."""
    with ScriptedServer(parse_script([{"say": "hello from the model"}])) as server:
        upstream = Upstream(server.base_url("openai"), (("Authorization", f"Bearer {REAL_KEY}"),))
        with EgressRelay(upstream) as relay:
            (tmp_path / "chat.py").write_text(CHAT)
            (tmp_path / "stream.py").write_text(STREAM)
            spec = SandboxSpec(kind="bwrap", mounts=relay.mounts(), env=relay.env())
            with open_sandbox(tmp_path, spec) as box:
                yield box, relay, server


def _run(box, relay, argv):
    return box.run(shlex.join(relay.wrap(argv)), timeout_s=60)


@bwrap_only
def test_the_model_route_reaches_the_upstream_with_the_real_key_which_never_enters_the_sandbox(relayed):
    box, relay, server = relayed
    result = _run(box, relay, ["python3", "chat.py", relay.upstream.inner_base_url])
    assert "ANSWER hello from the model" in result.stdout and "NO KEY" in result.stdout
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {REAL_KEY}"
    assert relay.report()["contacted"] == {relay.upstream.host: 1}


@bwrap_only
def test_a_streamed_answer_passes_through_chunk_by_chunk(relayed):
    box, relay, server = relayed
    result = _run(box, relay, ["python3", "stream.py", relay.upstream.inner_base_url])
    assert "CHUNKS" in result.stdout and "hello from the model" in result.stdout, result.stderr[-2000:]


@bwrap_only
def test_every_other_destination_is_refused_and_recorded(relayed):
    box, relay, _server = relayed
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    accepted = accept_in_background(listener)
    try:
        probe = (f"import urllib.request as u\n"
                 f"for url in ('http://127.0.0.1:{port}/', 'https://telemetry.example.com/v1/events'):\n"
                 f"    try:\n        u.urlopen(url, timeout=5)\n    except Exception as e:\n        print('REFUSED', url, e)\n"
                 f"import socket\n"
                 f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                 f"except OSError as e:\n    print('DIRECT FAILED', e)\n")
        result = _run(box, relay, ["python3", "-c", probe])
    finally:
        listener.close()
    assert result.stdout.count("REFUSED") == 2 and "DIRECT FAILED" in result.stdout
    assert not accepted  # the host's loopback service was never reached
    refused = {r["host"] for r in relay.report()["refused"]}
    assert {f"127.0.0.1:{port}", "telemetry.example.com:443"} <= refused


@bwrap_only
def test_a_client_that_sends_everything_to_its_proxy_still_reaches_the_model(relayed):
    box, relay, server = relayed
    via_proxy = ("import json, os, urllib.request, sys\n"
                 "opener = urllib.request.build_opener(urllib.request.ProxyHandler({'http': os.environ['HTTP_PROXY']}))\n"
                 "req = urllib.request.Request(sys.argv[1] + '/chat/completions', data=json.dumps({'model': 'm', "
                 "'messages': [], 'tools': [{'type': 'function', 'function': {'name': 'w'}}]}).encode(), "
                 "headers={'Content-Type': 'application/json'})\n"
                 "print('ANSWER', json.load(opener.open(req, timeout=20))['choices'][0]['message']['content'])\n")
    result = _run(box, relay, ["python3", "-c", via_proxy, relay.upstream.inner_base_url])
    assert "ANSWER hello from the model" in result.stdout, result.stderr[-2000:]
    assert relay.report()["refused"] == []
