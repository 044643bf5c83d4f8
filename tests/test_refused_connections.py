"""A server that cannot be reached is not a timeout, and a test where nothing answered did not
complete (review item 6).

The provider layer's one classification (harness/models/providers/failures.py) tells a refused
connection (``connect``), a host name that does not resolve (``dns``), a real timeout, a broken
connection and the HTTP statuses apart, through both async transports (the SDK's aiohttp client,
which names a refused connection a connect timeout, and the httpx bridge). ``bench stress`` and
``bench dataset`` against a port nothing listens on end as failed (exit 1) with one line naming
the class and the URL; against loopback servers that answer, nothing changes. A host name that
does not resolve is simulated at the resolver (``socket.getaddrinfo`` refuses ``*.invalid``):
no test resolves a name.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import ssl
import threading

import httpx
import httpx2
import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.datasets import summary as report
from harness.datasets.planning import DatasetRunOptions, prepare
from harness.datasets.run import execute
from harness.datasets.storing import run_record
from harness.models.providers import ChatRequest, Message, ProviderError, get_provider
from harness.models.providers.failures import ERROR_CLASSES, classify_transport, error_class, failed_url
from harness.models.providers.registry import parse_target
from harness.stress import StressOptions, run_stress
from support.datasets import ANSWERS, CASES, env, lines_of, mock_server, write_dataset
from support.stub_model import make_stub

__all__ = ["env", "mock_server"]  # fixtures of support.datasets

TRANSPORTS = ["aiohttp", "httpx"]
NOWHERE = "http://model.invalid/v1"  # never resolved (see the unresolvable fixture)


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: bound, then closed again."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def unresolvable(monkeypatch):
    """The resolver refuses every ``*.invalid`` host name as the system's would (EAI_NONAME)."""
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name and name.endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def transport(request, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", request.param)
    return request.param


@pytest.fixture
def stub():
    servers = []

    def start(**behaviour):
        server, url, _ = make_stub(**behaviour)
        servers.append(server)
        return url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def bench(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def raised(outer: BaseException, cause: BaseException) -> BaseException:
    """``outer`` as raised ``from cause``."""
    try:
        try:
            raise cause
        except BaseException as inner:
            raise outer from inner
    except BaseException as exc:  # noqa: BLE001 - the point is to get it back
        return exc


def one_request(url: str, **kw) -> ProviderError:
    provider = get_provider("openai-compatible", base_url=url)
    request = ChatRequest(messages=[Message(role="user", content="hi")], model="m", timeout_s=5)

    async def call():
        try:
            await provider.achat(request, retry=False, **kw)
        finally:
            await provider.aclose()

    with pytest.raises(ProviderError) as failed:
        asyncio.run(call())
    return failed.value


def stress_options(url: str, profile: str = "sustained", **kw) -> StressOptions:
    kw.setdefault("concurrency", 4)
    if profile == "sustained":
        kw.setdefault("duration_s", 1.0)
        kw.setdefault("step_seconds", 0.5)
    return StressOptions(provider="openai-compatible", model="m", base_url=url, profile=profile, **kw)


# -- the classification --------------------------------------------------------------------------------


def test_item6_a_transport_failure_is_classed_by_its_innermost_cause():
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed ('127.0.0.1', 9)")
    # What the openai SDK's aiohttp client raises for a refused connection: a connect *timeout*.
    assert classify_transport(raised(httpx2.ConnectTimeout("Cannot connect to host"), refused))[0] == "connect"
    assert classify_transport(raised(httpx.ConnectError("x"), socket.gaierror(-2, "Name or service not known"))) \
        == ("dns", "Name or service not known")
    assert classify_transport(raised(httpx2.ReadTimeout("slow"), TimeoutError()))[0] == "timeout"
    assert classify_transport(httpx2.ConnectTimeout("connect timed out"))[0] == "timeout"
    assert classify_transport(raised(httpx2.ReadError("x"), ConnectionResetError(errno.ECONNRESET, "reset")))[0] \
        == "connection"
    assert classify_transport(raised(httpx.ConnectError("x"), OSError(errno.EHOSTUNREACH, "No route to host"))) \
        == ("connect", "No route to host")
    assert classify_transport(raised(httpx.ConnectError("x"), ssl.SSLError("bad certificate")))[0] == "connect"
    # Every address of a host refused (an exception group): still refused.
    group = ExceptionGroup("multiple connection attempts failed", [refused, ConnectionRefusedError()])
    assert classify_transport(raised(OSError("All connection attempts failed"), group))[0] == "connect"
    assert classify_transport(ValueError("not a transport failure")) is None


def test_item6_one_class_per_failure_of_a_model_call():
    assert error_class(ProviderError("x", kind="unavailable", reason="connection", network="connect")) == "connect"
    assert error_class(ProviderError("x", kind="unavailable", reason="connection", network="dns")) == "dns"
    assert error_class(ProviderError("x", kind="unavailable", reason="connection", network="connection")) \
        == "connection"
    assert error_class(ProviderError("x", kind="unavailable", reason="timeout", network="timeout")) == "timeout"
    assert error_class(TimeoutError()) == "timeout"
    assert error_class(ProviderError("x", kind="unavailable", status=408, reason="status")) == "timeout"
    assert error_class(ProviderError("x", kind="unavailable", status=429, reason="status")) == "429"
    assert error_class(ProviderError("x", kind="unavailable", status=529, reason="status")) == "5xx"
    assert error_class(ProviderError("x", kind="auth", status=401)) == "auth"
    assert error_class(ProviderError("x", kind="refused", status=404)) == "4xx"
    assert error_class(ValueError("unreadable answer")) == "other"
    assert set(ERROR_CLASSES) >= {"connect", "dns", "timeout", "connection", "429", "5xx", "auth", "4xx", "other"}


@pytest.mark.parametrize("transport", TRANSPORTS, indirect=True)
@pytest.mark.parametrize("stream", [False, True])
def test_item6_a_refused_connection_is_connect_with_its_url_never_a_timeout(transport, closed_port, stream):
    url = f"http://127.0.0.1:{closed_port}/v1"
    error = one_request(url, stream=stream)
    assert error_class(error) == "connect" and error.network == "connect"
    assert (error.kind, error.reason, error.status) == ("unavailable", "connection", None)  # retried as before
    assert str(error) == f"openai-compatible: connection refused at {url}/chat/completions"
    assert "timed out" not in str(error)


@pytest.mark.parametrize("transport", TRANSPORTS, indirect=True)
def test_item6_a_real_timeout_and_a_broken_connection_keep_their_classes(transport):
    held = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def accept():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if len(held) == 2:  # the second: read the request and hang up
                conn.recv(65536)
                conn.close()

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    provider = get_provider("openai-compatible", base_url=url)
    request = ChatRequest(messages=[Message(role="user", content="hi")], model="m", timeout_s=0.3)

    async def twice():
        errors = []
        for _ in range(2):
            try:
                await provider.achat(request, retry=False)
            except ProviderError as exc:
                errors.append(exc)
            await provider.aclose()  # a new connection for the second request
        return errors

    try:
        silent, hung_up = asyncio.run(twice())
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert error_class(silent) == "timeout" and str(silent) == "openai-compatible: request timed out"
    assert error_class(hung_up) == "connection" and url in str(hung_up)


@pytest.mark.parametrize("transport", TRANSPORTS, indirect=True)
def test_item6_a_host_name_that_does_not_resolve_is_dns(transport, unresolvable):
    error = one_request(NOWHERE)
    assert error_class(error) == "dns" and error.reason == "connection"
    assert str(error) == (f"openai-compatible: DNS lookup failed for {NOWHERE}/chat/completions "
                          f"(Name or service not known)")
    assert failed_url(error) == f"{NOWHERE}/chat/completions"


def test_item6_the_url_named_carries_no_credentials():
    request = httpx2.Request("POST", "http://user:secret@127.0.0.1:9/v1/chat/completions?key=abc")
    error = raised(httpx2.ConnectError("x", request=request), ConnectionRefusedError())
    assert failed_url(error) == "http://127.0.0.1:9/v1/chat/completions"


# -- bench stress ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS, indirect=True)
def test_item6_stress_against_a_closed_port_fails_at_once_as_connect(transport, closed_port):
    url = f"http://127.0.0.1:{closed_port}/v1"
    record = run_stress(stress_options(url, concurrency=4)).record
    s = record.summary
    assert record.status == "failed"
    assert s["stopReason"] == f"nothing answered: openai-compatible: connection refused at {url}/chat/completions"
    # Stopped at the first failure: the requests already in flight, not a whole profile's worth.
    assert 1 <= s["requests"] <= 4 and s["ok"] == 0
    assert s["errors"]["connection"] == s["requests"] and s["errors"]["timeout"] == 0
    assert {m["class"] for m in s["errorMessages"]} == {"connect"}
    assert len(record.steps) == 1


def test_item6_stress_against_a_host_that_does_not_resolve_fails_as_dns(unresolvable):
    record = run_stress(stress_options(NOWHERE, "ramp", max_concurrency=2, step_requests=2)).record
    assert record.status == "failed" and record.summary["requests"] == 1
    assert record.summary["stopReason"].startswith(f"nothing answered: openai-compatible: DNS lookup failed for "
                                                   f"{NOWHERE}/chat/completions")
    assert [m["class"] for m in record.summary["errorMessages"]] == ["dns"]


def test_item6_stress_where_every_request_timed_out_is_failed_not_completed(stub):
    url = stub(service_s=1.0)
    record = run_stress(stress_options(url, duration_s=0.4, step_seconds=0.4, concurrency=2, timeout_s=0.15,
                                       stream=False)).record
    s = record.summary
    assert record.status == "failed" and s["ok"] == 0 and s["errors"]["timeout"] == s["requests"] > 0
    assert s["stopReason"] == (f"nothing answered: no answer within 0.15 s (timeout, {s['requests']} of "
                               f"{s['requests']} request(s))")


def test_item6_stress_with_answers_is_unchanged(stub):
    url = stub(capacity=50, service_s=0.01)
    fine = run_stress(stress_options(url, duration_s=0.4, step_seconds=0.2, concurrency=2)).record
    assert fine.status == "completed" and fine.summary["stopReason"] is None
    assert fine.summary["ok"] == fine.summary["requests"] > 0
    # Answers first, then every request fails: measured, and completed as before.
    failing = stub(capacity=50, service_s=0.01, fail_from=0.15)
    later = run_stress(stress_options(failing, duration_s=0.5, step_seconds=0.25, concurrency=2)).record
    assert later.status == "completed" and later.summary["stopReason"] is None
    assert 0 < later.summary["ok"] < later.summary["requests"] and later.summary["errors"]["5xx"] > 0


@pytest.fixture
def local_store(tmp_path, monkeypatch):
    from support.scenario_builders import use_local_store

    use_local_store(monkeypatch, tmp_path)
    return tmp_path


def test_item6_bench_stress_against_a_closed_port_exits_1_naming_the_url(local_store, closed_port):
    url = f"http://127.0.0.1:{closed_port}/v1"
    result = bench("stress", "openai-compatible:m", "--base-url", url, "--profile", "sustained", "--duration", "2",
                   "--step-seconds", "1")
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: nothing answered: openai-compatible: connection refused at {url}/chat/completions")
    assert "Status: failed (nothing answered:" in result.stdout
    assert "timeout" not in result.output and "timed out" not in result.output
    assert "Resilience:" not in result.stdout and "Nothing answered:" in result.stdout
    stored = json.loads(bench("stress", "list", "--json").stdout)
    assert [r["status"] for r in stored] == ["failed"]


def test_item6_bench_stress_that_is_answered_exits_0(local_store, stub):
    url = stub(capacity=50, service_s=0.01)
    result = bench("stress", "openai-compatible:m", "--base-url", url, "--profile", "sustained", "--duration", "0.4",
                   "--step-seconds", "0.2")
    assert result.exit_code == 0, result.output
    assert "Status: completed" in result.stdout and "Resilience:" in result.stdout
    assert "nothing answered" not in result.output


# -- bench dataset ---------------------------------------------------------------------------------------


def dataset_args(ds, url, out, *extra):
    return ["dataset", ds, "--providers", "openai-compatible:m", "--base-url", url, "--output", out, "--quiet",
            "--retries", "0", *extra]


@pytest.mark.parametrize("transport", TRANSPORTS, indirect=True)
def test_item6_bench_dataset_against_a_closed_port_exits_1_with_one_line(tmp_path, transport, closed_port):
    url = f"http://127.0.0.1:{closed_port}/v1"
    out = tmp_path / "out"
    result = bench(*dataset_args(write_dataset(tmp_path / "d.json"), url, out))
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: nothing answered: every request failed (connect {len(CASES)}): "
                      f"openai-compatible: connection refused at {url}/chat/completions"]
    assert "timeout" not in result.output and "timed out" not in result.output
    cells = lines_of(out)
    assert len(cells) == len(CASES) and {c["error_kind"] for c in cells} == {"connect"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["error_kinds"] == {"connect": len(CASES)}


def test_item6_dataset_cells_tell_dns_from_connect_and_are_stored_as_infra(tmp_path, unresolvable):
    opts = DatasetRunOptions(dataset=str(write_dataset(tmp_path / "d.json")), output_dir=tmp_path / "out",
                             targets=[parse_target("openai-compatible:m", base_url=NOWHERE)], max_attempts=1,
                             concurrency=2)
    run = prepare(opts)
    result = asyncio.run(execute(run))
    assert {c["error_kind"] for c in result.cells} == {"dns"}
    assert report.no_answer_reason(result.cells, {"openai-compatible:m": NOWHERE}) == (
        f"nothing answered: every request failed (dns {len(CASES)}): openai-compatible: DNS lookup failed for "
        f"{NOWHERE}/chat/completions (Name or service not known)")
    cases = {c.id: c for c in run.dataset.cases}
    record = run_record(run, result.cells[0], cases, "none")
    assert (record.status, record.failure_class) == ("error", "infra")


def test_item6_the_no_answer_line_names_the_url_when_the_message_does_not():
    cells = [{"status": "error", "target": "openai-compatible:m", "error": "openai-compatible: request timed out",
              "error_kind": "timeout"}] * 2 + [
             {"status": "error", "target": "openai-compatible:m", "error": "HTTP 503", "error_kind": "unavailable"}]
    assert report.no_answer_reason(cells, {"openai-compatible:m": "http://127.0.0.1:8080/v1"}) == (
        "nothing answered: every request failed (timeout 2, unavailable 1): openai-compatible: request timed out "
        "(http://127.0.0.1:8080/v1)")
    assert report.no_answer_reason([*cells, {"status": "passed", "target": "openai-compatible:m"}]) is None
    assert report.no_answer_reason([]) is None


def test_item6_bench_dataset_that_is_answered_is_unchanged(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS)
    out = tmp_path / "out"
    result = bench(*dataset_args(write_dataset(tmp_path / "d.json"), mock.base_url, out))
    assert result.exit_code == 0, result.output
    assert "nothing answered" not in result.output and "error:" not in result.stderr
    # Some answered, some refused (429): counted as errors, exit 0 as before.
    partial = mock_server(answers=ANSWERS, fail_first=2)
    out2 = tmp_path / "out2"
    result = bench(*dataset_args(write_dataset(tmp_path / "d.json"), partial.base_url, out2, "--concurrency", "1"))
    assert result.exit_code == 0, result.output
    assert "nothing answered" not in result.output
    assert [c["error_kind"] for c in lines_of(out2)].count("unavailable") == 2
