"""A loopback listener that records who reached it, for the tests that prove nobody did."""

from __future__ import annotations

import socket
import threading


def accept_in_background(listener: socket.socket) -> list:
    """Accept one connection on ``listener`` in a daemon thread; the list it returns holds it
    once made. Closing the listener ends the wait quietly (``accept`` raises then)."""
    accepted: list = []

    def wait() -> None:
        try:
            accepted.append(listener.accept())
        except OSError:  # the test closed the listener: nobody came
            pass

    threading.Thread(target=wait, daemon=True).start()
    return accepted
