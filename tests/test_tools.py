"""Agent tools bound to a workspace: behaviour, aliases, errors returned as results."""

from __future__ import annotations

import httpx
import pytest
import respx

from harness.tools import Toolset, canonical_tool_name
from harness.tools.fetch import FetchRefused, check_url
from harness.tools.oracle import DEFAULT_ANSWER, Oracle


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("readme\n")
    return root


@pytest.fixture
def toolset(ws, make_sandbox):
    """``toolset(**options)``: a Toolset on ``ws`` in a process-group sandbox."""
    return lambda **options: Toolset(make_sandbox(ws), **options)


def test_read_write_list_round_trip(ws, toolset):
    tools = toolset()
    assert tools.execute("read_file", {"path": "src/app.py"}).content == "print('hi')\n"
    res = tools.execute("write_file", {"path": "new/deep/file.txt", "content": "x" * 10})
    assert not res.is_error and (ws / "new" / "deep" / "file.txt").read_text() == "x" * 10
    listing = tools.execute("list_directory", {"path": "."}).content.splitlines()
    assert listing == ["README.md", "new/", "src/"]
    tree = tools.execute("list_directory", {"recursive": True}).content.splitlines()
    assert "new/deep/file.txt" in tree and "src/app.py" in tree


def test_camel_case_aliases_are_accepted(ws, toolset):
    tools = toolset()
    assert tools.execute("readFile", {"filePath": "src/app.py"}).content == "print('hi')\n"
    assert not tools.execute("writeFile", {"path": "a.txt", "content": "A"}).is_error
    assert "a.txt" in tools.execute("listFiles", {"path": "."}).content
    assert "exit code: 0" in tools.execute("runCommand", {"command": "true"}).content
    assert canonical_tool_name("listDirectory") == "list_directory"


def test_tool_errors_come_back_as_error_results(ws, toolset):
    tools = toolset()
    for name, args, fragment in [
        ("read_file", {"path": "missing.py"}, "no such file"),
        ("read_file", {"path": "src"}, "is a directory"),
        ("read_file", {}, "bad arguments"),
        ("read_file", None, "not a valid JSON object"),
        ("write_file", {"path": "x", "content": 5}, "content must be a string"),
        ("list_directory", {"path": "src/app.py"}, "is a file"),
        ("no_such_tool", {}, "unknown or unavailable tool"),
        ("ask_user", {"question": "?"}, "unknown or unavailable tool"),
        ("fetch_url", {"url": "https://example.org"}, "unknown or unavailable tool"),
    ]:
        res = tools.execute(name, args)
        assert res.is_error and fragment in res.content, (name, res)


def test_write_file_size_cap(ws, toolset):
    tools = toolset(write_cap=100)
    res = tools.execute("write_file", {"path": "big.txt", "content": "x" * 101})
    assert res.is_error and "at most 100" in res.content
    assert not (ws / "big.txt").exists()


def test_read_file_is_capped(ws, toolset):
    (ws / "big.txt").write_text("y" * 5000)
    res = toolset(read_cap=1000).execute("read_file", {"path": "big.txt"})
    assert res.content.startswith("y" * 1000) and "truncated" in res.content and len(res.content) < 1200


def test_specs_are_full_json_schemas_and_optional_tools_appear_only_when_enabled(ws, toolset):
    plain = toolset()
    assert [s.name for s in plain.specs] == ["read_file", "write_file", "list_directory", "run_command"]
    assert plain.specs[1].parameters["required"] == ["path", "content"]
    full = toolset(oracle_answers={"q": "a"}, allow_fetch_url=True)
    assert [s.name for s in full.specs][-2:] == ["ask_user", "fetch_url"]


def test_run_command_reports_exit_code_and_output(ws, toolset):
    res = toolset().execute("run_command", {"command": "echo out; echo err >&2; exit 3"})
    assert "exit code: 3" in res.content and "out" in res.content and "err" in res.content


def test_ask_user_exact_similar_and_default_answers_are_logged():
    oracle = Oracle({"Should I keep Python 3.8 support?": "No, 3.11+ only.", "Which test runner?": "pytest"})
    assert oracle.ask("  should i keep python 3.8 SUPPORT  ") == "No, 3.11+ only."
    assert oracle.ask("Should we keep python 3.8 supported?") == "No, 3.11+ only."
    assert oracle.ask("What colour is the logo?") == DEFAULT_ANSWER
    assert [e["match"] for e in oracle.log] == ["exact", "similar", "default"]
    assert oracle.log[2]["question"] == "What colour is the logo?"


def test_ask_user_tool_uses_the_scenario_oracle(ws, toolset):
    tools = toolset(oracle_answers={"Which test runner?": "pytest"})
    assert tools.execute("askUser", {"question": "which test runner"}).content == "pytest"
    assert tools.questions[0]["answer"] == "pytest"


@pytest.mark.parametrize(
    "url, addresses",
    [
        ("file:///etc/passwd", ["8.8.8.8"]),
        ("ftp://example.org/x", ["8.8.8.8"]),
        ("http://localhost/", ["127.0.0.1"]),
        ("http://internal/", ["10.1.2.3"]),
        ("http://metadata/", ["169.254.169.254"]),
        ("http://v6/", ["::1"]),
        ("http://mapped/", ["::ffff:127.0.0.1"]),
        ("http://mixed/", ["8.8.8.8", "192.168.0.1"]),
    ],
)
def test_fetch_url_refuses_non_http_and_non_public_addresses(url, addresses):
    with pytest.raises(FetchRefused):
        check_url(url, resolver=lambda host: addresses)


def test_fetch_url_refuses_loopback_with_the_real_resolver(ws, toolset):
    res = toolset(allow_fetch_url=True).execute("fetch_url", {"url": "http://127.0.0.1:9/"})
    assert res.is_error and "non-public" in res.content


@respx.mock
def test_fetch_url_fetches_public_pages_with_a_size_cap_and_checks_redirects(ws, monkeypatch, toolset):
    import harness.tools.fetch as fetch

    monkeypatch.setattr(fetch, "DEFAULT_MAX_BYTES", 100)
    respx.get("http://docs.example/page").mock(return_value=httpx.Response(200, text="z" * 1000))
    respx.get("http://docs.example/moved").mock(return_value=httpx.Response(302, headers={"location": "http://intranet.example/"}))
    resolver = {"docs.example": ["93.184.216.34"], "intranet.example": ["10.0.0.5"]}
    tools = toolset(allow_fetch_url=True, fetch_resolver=lambda h: resolver[h])
    ok = tools.execute("fetchUrl", {"url": "http://docs.example/page"})
    assert not ok.is_error and ok.content.startswith("HTTP 200") and "truncated" in ok.content
    assert ok.content.count("z") <= 100
    redirected = tools.execute("fetch_url", {"url": "http://docs.example/moved"})
    assert redirected.is_error and "non-public" in redirected.content
