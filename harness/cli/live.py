"""A live display on stderr shared by the commands that show progress (rich is imported only
when a display starts, so that ``bench --help`` stays quick)."""

from __future__ import annotations

import sys
from typing import Any


class LiveOnStderr:
    """A renderable (its ``__rich__``) redrawn live on stderr a few times a second, when stderr
    is a terminal and ``quiet`` is false; otherwise nothing is drawn."""

    quiet: bool = False
    live: Any = None

    def __enter__(self) -> Any:
        if not self.quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.live import Live

            self.live = Live(self, console=Console(stderr=True), refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.refresh()
            self.live.__exit__(None, None, None)
