"""The quick YAML reader gives exactly what PyYAML's loader gives, or steps aside.

Every spelling where YAML 1.1 (PyYAML) and YAML 1.2 (the compiled reader) disagree, and a
hundred thousand generated documents, some damaged, are read both ways: whenever the quick
reader answers, its data must equal the loader's, type for type, and the loader must accept
the text."""

from __future__ import annotations

import math
import random

import pytest
import yaml

from harness.datasets import format as dataset_format
from harness.datasets import quick_yaml, readers
from harness.datasets.quick_yaml import QuickReader

LOADER = readers._YamlLoader
QUICK = QuickReader(LOADER.yaml_implicit_resolvers)

# Plain scalars, many of them read differently by YAML 1.1 and 1.2.
SPELLINGS = """0 00 007 0777 08 09 0o17 0o8 0x1F 0X1F -0x1F 0b101 -0b1 1_000 1__0 +1 -1 +0 -0 1. .5 +.5 -.5 1.5
1.5e3 1.5e+3 1.5E-3 1e3 1E3 1e+3 -1e-3 1e400 1:30 1:30.5 -1:30 190:20:30 12:30 .inf -.inf +.inf .Inf .INF inf Inf
-inf nan NaN .nan .NaN .NAN infinity true True TRUE false False FALSE tRue yes Yes YES no No NO on On ON off Off
OFF y Y n N null Null NULL ~ = << 2024-05-01 2024-05-01T10:00:00Z 123456789012345678901234567890
-123456789012345678901234567890 0.1 3.14159265358979323846 0.0 -0.0 1e 1e- .e3 . + - 0x 0o 0b 0x_1 0_1 1,000
$1 1/2 12e 0.5.5 +inf hello a:b a#b @at `tick %pc &anc *ali !tag |pipe >gt ? -- --- ... é 日本""".split()
CONTEXTS = ("k: {}\n", "- {}\n", "[{}]\n", "{{a: {}}}\n", "{}: v\n", "- k: {}\n  j: x\n")


def loaded(text: str) -> tuple[object, str | None]:
    try:
        return yaml.load(text, Loader=LOADER), None
    except yaml.YAMLError as exc:
        return None, type(exc).__name__


def same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (True is not 1, 1.0 is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return (list(a) == list(b) and all(type(x) is type(y) for x, y in zip(a, b))
                and all(same(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def agrees(text: str) -> bool:
    """Whether the quick reader's answer for ``text`` (when it gives one) is the loader's."""
    quick = QUICK.read(text)
    if quick is None:
        return True
    want, error = loaded(text)
    return error is None and same(want, quick[0])


def test_the_quick_reader_is_installed_and_reads_a_plain_dataset():
    assert quick_yaml.AVAILABLE, "yaml-rs is a dependency of the project"
    text = ('name: qa\nversion: "1.0.0"\ndescription: "cases"\ntest_cases:\n'
            '  - id: qa-1\n    category: math\n    prompt: "What is 2+2?"\n    expected: "4"\n'
            "    config: {temperature: 0.5, max_tokens: 20}\n"
            "    assert:\n      - type: icontains\n        value: four\n        weight: 2\n      - type: is-json\n")
    got = QUICK.read(text.replace("{temperature: 0.5, max_tokens: 20}", "\n      temperature: 0.5\n      max_tokens: 20"))
    assert got is not None and same(got[0], yaml.load(text, Loader=LOADER))


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_reads_as_the_loader_reads_it(spelling):
    for context in CONTEXTS:
        for written in (spelling, f"'{spelling}'", '"' + spelling.replace("\\", "\\\\") + '"'):
            text = context.format(written)
            assert agrees(text), text


@pytest.mark.parametrize("text", [
    "k: 0777\n", "k: 08\n", "k: 0o17\n", "k: 0X1F\n", "k: 1e3\n", "k: 1.5e3\n", "k: +.5\n",  # numbers
    "k: yes\n", "k: off\n", "k: 1:30\n", "k: =\n", "<<: {a: 1}\n",  # 1.1 types of text
    "k: |\n\n", "- >\n\n\n",  # an empty block scalar
    "k: &a x\nj: *a\n", "&a: x\n", "{?: y}\n", "k: !!str 1\n", "k: [a, |b]\n", "k: @x\n",  # node starts
    "a: 1\n---\nb: 2\n", "k:\tv\n", "k: v\x85w\n", "k: \x07\n", "1: a\n",  # documents, characters, keys
])
def test_what_the_two_read_differently_is_left_to_the_loader(text):
    assert QUICK.read(text) is None


def _scalar(r: random.Random) -> str:
    s = r.choice(SPELLINGS + ["alpha", "a b", "It's", 'say "hi"', "x"])
    style = r.random()
    if style < 0.55:
        return s
    if style < 0.75:
        return "'" + s.replace("'", "''") + "'"
    if style < 0.92:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return r.choice(['"\\t\\x41\\u00e9"', "'multi\n  line'", "plain\n  cont", '""', "''", '"a\\\nb"',
                     '"\\N\\_\\L\\P\\e\\0\\a"', '"\\U0001F600 \\/"', '"fold\n\n  ed"', "'sq\n\n   x'", "plain  # c",
                     "'q' # c", "'q'x", "a: b", "trail   ", "x\n\n  y", '"\\q"', "'it''s'", '"\\x85"', "- ", ": ",
                     "a -b", "-a", ":a", "?a", "a?", "a:", "[a", "a]", "}", "#x"])


def _flow(r: random.Random, depth: int) -> str:
    if depth > 2 or r.random() < 0.5:
        return _scalar(r)
    if r.random() < 0.5:
        return "[" + ", ".join(_flow(r, depth + 1) for _ in range(r.randint(0, 3))) + "]"
    return "{" + ", ".join(f"{_scalar(r)}: {_flow(r, depth + 1)}" for _ in range(r.randint(0, 3))) + "}"


def _value(r: random.Random, indent: int, depth: int) -> str:
    choice = r.random()
    if choice < 0.5:
        return _scalar(r)
    if choice < 0.6:
        return _flow(r, 0)
    if choice < 0.67:
        pad = " " * (indent + 2)
        body = [pad + "text " + _scalar(r), pad + "more", "", pad + "  deeper", pad + "end  ", "", ""]
        r.shuffle(body)
        header = r.choice(["|", ">", "|-", ">+", "|2", ">-", "|+", ">1", "| # c"])
        return header + "\n" + "\n".join(body[:r.randint(1, 7)])
    if choice < 0.7:
        return r.choice(["&a 1", "*a", "!!str 12", "!!int '7'", "!x y", "&b [1, 2]", ""])
    block = _block(r, indent, depth)
    return _scalar(r) if block is None else "\n" + block


def _block(r: random.Random, indent: int, depth: int) -> str | None:
    if depth > 3 or r.random() < 0.2:
        return None
    pad, lines = " " * indent, []
    for _ in range(r.randint(1, 4)):
        head = f"{pad}-" if r.random() < 0.5 else f"{pad}{_scalar(r) if r.random() < 0.3 else r.choice(['id', 'key', 'a b'])}:"
        item = _value(r, indent + 2, depth + 1)
        lines.append(head + item if item.startswith("\n") else f"{head} {item}")
    if r.random() < 0.1:
        lines.insert(r.randrange(len(lines) + 1), f"{pad}# a comment")
    return "\n".join(lines)


def _document(r: random.Random) -> str:
    text = _block(r, 0, 0) or _scalar(r)
    if r.random() < 0.05:
        text = "---\n" + text
    if r.random() < 0.03:
        text += "\n---\nx: 1"
    if r.random() < 0.05:
        text = text.replace("  ", "\t", 1)
    if r.random() < 0.03:
        text += "\n" + r.choice(["\x07", "\ufeff", "\x85", "key: \x01", "\u2028"])
    if r.random() < 0.3:  # damage: a character somewhere, or a line's indentation
        lines = text.split("\n")
        i = r.randrange(len(lines))
        if r.random() < 0.5:
            lines[i] = r.choice(["", " ", "  ", "   "]) + lines[i].lstrip(" ")
        else:
            j = r.randint(0, len(lines[i]))
            lines[i] = lines[i][:j] + r.choice([": ", "- ", "#", "'", '"', " ", ":", "-", ",", "x"]) + lines[i][j:]
        text = "\n".join(lines)
    return text + "\n"


@pytest.mark.parametrize("seed", range(5))
def test_generated_documents_read_as_the_loader_reads_them(seed):
    r = random.Random(seed)
    taken = 0
    for _ in range(20_000):
        text = _document(r)
        quick = QUICK.read(text)
        if quick is None:
            continue
        taken += 1
        want, error = loaded(text)
        assert error is None and same(want, quick[0]), text
    assert taken > 2_000  # the quick reader answered for a good share of them


def test_a_dataset_file_reads_the_same_with_and_without_the_quick_reader(tmp_path, monkeypatch):
    path = tmp_path / "qa.yaml"
    path.write_text('name: qa\nversion: 1.10\ntest_cases:\n  - id: a\n    prompt: "Say yes."\n    expected: "yes"\n'
                    "    threshold: 0.5\n    assert:\n      - type: max-words\n        value: 3\n", "utf-8")
    monkeypatch.setenv("ZE_BENCHMARKS_DATASET_CACHE", "0")
    quick = dataset_format.load_file(path)
    monkeypatch.setattr(readers._QUICK, "enabled", False)
    plain = dataset_format.load_file(path)
    assert quick == plain and quick.version == "1.10"  # a number's spelling kept, as the loader keeps it
