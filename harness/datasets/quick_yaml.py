"""A quicker way to the same data as PyYAML, for the plain YAML most dataset files are.

Dataset files are read as PyYAML's safe loader reads them (YAML 1.1: ``yes`` is true, ``0777``
is octal, ``1e3`` is text), and that loader hands every node to Python. ``yaml_rs`` (a compiled
YAML 1.2 reader) builds the same plain data several times faster, but YAML 1.2 reads some
spellings differently and accepts some text PyYAML rejects. :func:`read` takes its result only
when nothing in the text or the data can differ, and returns None otherwise, so that the caller
reads the file with PyYAML as before. A file is left to PyYAML when:

* its text has a tab, a YAML 1.1 line break (U+0085, U+2028, U+2029), a byte order mark, a
  character PyYAML does not accept, a merge key (``<<``), a document or directive marker, or a
  node that starts with a flow collection, a tag, an anchor, an alias, a complex key or a
  reserved indicator (``[ { ! & * ? @ ` %`` after a space or a line break);
* the reader fails (PyYAML words the error) or gives anything but strings, numbers, booleans,
  nulls, lists and mappings with string keys;
* a string would be something else if written plain in YAML 1.1 (``yes``, ``1:30``, ``=``...)
  and the text has it where a plain scalar could stand (``expected: "4"`` is quoted, so it is
  taken; ``expected: 4`` is a number either way), or is an empty block scalar (which the reader
  ends with a line break);
* there is a number and the text has a spelling the two read differently (a leading zero, ``0o``,
  ``0X``, an exponent, ``+.5``).

``tests/test_quick_yaml.py`` compares the two on every spelling above and on several hundred
thousand generated documents, damaged ones included. Without ``yaml_rs`` installed, every file
is read by PyYAML.

Why it exists: read alone, a plain dataset file takes about a quarter of PyYAML's time through it
(docs/PERFORMANCE.md, "Loading dataset files, measured alone", ``benchmarks/dataset_loading.py``).
"""

from __future__ import annotations

import re
from typing import Any

try:
    import yaml_rs
except ImportError:  # optional: PyYAML reads every file without it
    yaml_rs = None

#: Whether the quick reader is there at all.
AVAILABLE = yaml_rs is not None

# Texts whose presence anywhere leaves the file to PyYAML (the last four are never in ASCII text).
_ANYWHERE_ASCII = ("\t", "\r", "<<", "\n---", "\n...", "\n%")
_ANYWHERE = (*_ANYWHERE_ASCII, "\x85", "\u2028", "\u2029", "\ufeff")
_STARTS = ("---", "...", "%")
# Indicators that must not start a node: after a space or a line break.
_NODE_INDICATORS = "[{!&*?@`%"
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
# Numbers YAML 1.1 and 1.2 read differently: 0777 (octal in 1.1), 08 (text in 1.1), 0o17 and
# 0X1F (text in 1.1), 1e3 and 1.5e3 (text in 1.1), +.5 (text in 1.1); matched where a node starts.
_NUMBER_SPELLINGS = re.compile(r"[\s\[{,][-+]?(?:0[0-9oOX]|[0-9.][0-9._]*[eE][-+]?[0-9]|\.[0-9])")
_STR_TAG = "tag:yaml.org,2002:str"


def _risky_text(text: str) -> bool:
    if text.startswith(_STARTS) or any(part in text for part in (_ANYWHERE_ASCII if text.isascii() else _ANYWHERE)):
        return True
    for indicator in _NODE_INDICATORS:
        if indicator in text and (" " + indicator in text or "\n" + indicator in text
                                  or text.startswith(indicator)):
            return True
    # isprintable() is true only where PyYAML accepts every character; else ask precisely.
    return not text.replace("\n", " ").isprintable() and _NON_PRINTABLE.search(text) is not None


class QuickReader:
    """:meth:`read` for the implicit resolvers ``resolvers`` (a loader's
    ``yaml_implicit_resolvers``: first character -> [(tag, regexp)]) of the loader it stands in for."""

    def __init__(self, resolvers: dict[Any, list[tuple[str, Any]]]) -> None:
        self.resolvers = resolvers
        self.enabled = AVAILABLE and None not in resolvers  # a resolver for any first character: not handled
        self.first = frozenset(k for k in resolvers if k) | {"\n"}
        self._typed: dict[str, bool] = {}

    def _retyped(self, value: str) -> bool:
        """Whether the loader would read ``value``, written plain, as something other than this string."""
        known = self._typed.get(value)
        if known is not None:
            return known
        if value[0] == "\n":
            typed = not value.strip("\n")  # an empty block scalar: the quick reader keeps a line break
        else:
            typed = any(tag != _STR_TAG and regexp.match(value) for tag, regexp in self.resolvers.get(value[0], ()))
        if len(value) <= 64 and len(self._typed) < 20_000:
            self._typed[value] = typed
        return typed

    def read(self, text: str) -> tuple[Any] | None:
        """``(data,)``: what the loader would build from ``text``; None to leave it to the loader."""
        if not self.enabled or _risky_text(text):
            return None
        try:
            data = yaml_rs.loads(text, parse_datetime=False)
        except Exception:  # noqa: BLE001 - any failure: PyYAML reads it, and words any error
            return None
        first, retyped = self.first, self._retyped
        checked: set[str] = set()  # retyped strings found quoted only
        numbers = False
        stack = [data]
        while stack:
            value = stack.pop()
            kind = type(value)
            if kind is str:
                if value and value[0] in first and value not in checked:
                    if retyped(value) and (value[0] == "\n" or _written_plain(text, value)):
                        return None
                    checked.add(value)
            elif kind is dict:
                for key, item in value.items():
                    if type(key) is not str:
                        return None
                    if key and key[0] in first and key not in checked:
                        if retyped(key) and (key[0] == "\n" or _written_plain(text, key)):
                            return None
                        checked.add(key)
                    stack.append(item)
            elif kind is list:
                stack.extend(value)
            elif kind is int or kind is float:
                numbers = True
            elif kind is not bool and value is not None:
                return None
        if numbers and _NUMBER_SPELLINGS.search("\n" + text):
            return None
        return (data,)


_BEFORE_PLAIN = frozenset(" \n[{,:")
_AFTER_PLAIN = frozenset(" \n,]}:")


def _written_plain(text: str, value: str) -> bool:
    """Whether ``value`` (text without spaces) may stand in ``text`` as a plain scalar of its own:
    between a character that can precede a node and one that can end it. A string the loader
    would type (``yes``, ``4``) came from a quoted scalar when it never does."""
    start = text.find(value)
    size, end = len(value), len(text)
    while start >= 0:
        after = start + size
        if (start == 0 or text[start - 1] in _BEFORE_PLAIN) and (after == end or text[after] in _AFTER_PLAIN):
            return True
        start = text.find(value, start + 1)
    return False
