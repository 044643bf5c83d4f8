"""The mock model server of :mod:`harness.testing.mock_model` in its own process, for the
benchmarks: ``python benchmarks/mock_llm.py --delay-ms 50`` prints ``PORT <n>`` and serves
until killed. Importing this module gives the server's classes, as before."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.testing.mock_model import MockConfig, MockServer, ThreadedMock, start_in_thread  # noqa: E402

__all__ = ["MockConfig", "MockServer", "ThreadedMock", "start_in_thread", "main"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="An OpenAI-compatible mock model server on raw asyncio.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--capacity", type=int, default=None)
    args = parser.parse_args(argv)

    async def serve() -> None:
        server = MockServer(MockConfig(delay_ms=args.delay_ms, capacity=args.capacity))
        port = await server.start(port=args.port)
        print(f"PORT {port}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
