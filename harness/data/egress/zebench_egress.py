"""Run inside a sandbox without a network by zebench: the agent's only way out.

    python3 zebench_egress.py --socket /zebench/egress/relay.sock \\
        --listen 127.0.0.2:8400=model --listen 127.0.0.2:8401=proxy -- AGENT ARGS...

Listens on the given loopback addresses of the sandbox's own network namespace, and passes
every connection, byte for byte, to the harness's relay over the Unix socket, after one line
naming the route (``model`` or ``proxy``). The relay decides what goes further. Then it runs
the agent's command and exits with its status. Standard library only.
"""

import socket
import subprocess
import sys
import threading

CHUNK = 65536


def _pipe(source, target):
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(listener, path, route):
    while True:
        try:
            inner, _ = listener.accept()
        except OSError:
            return
        try:
            outer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            outer.connect(path)
            outer.sendall(f"{route}\r\n".encode())
        except OSError:
            inner.close()
            continue
        for source, target in ((inner, outer), (outer, inner)):
            threading.Thread(target=_pipe, args=(source, target), daemon=True).start()


def main(argv):
    path, listens, command = None, [], []
    i = 0
    while i < len(argv):
        if argv[i] == "--":
            command = argv[i + 1:]
            break
        if argv[i] == "--socket":
            path = argv[i + 1]
        elif argv[i] == "--listen":
            address, route = argv[i + 1].split("=", 1)
            host, port = address.rsplit(":", 1)
            listens.append((host, int(port), route))
        i += 2
    if not path or not command:
        print("usage: zebench_egress.py --socket PATH --listen HOST:PORT=ROUTE ... -- COMMAND", file=sys.stderr)
        return 2
    for host, port, route in listens:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((host, port))
        except OSError:  # a loopback address the namespace lacks: the first one always exists
            listener.bind(("127.0.0.1", port))
        listener.listen(64)
        threading.Thread(target=_serve, args=(listener, path, route), daemon=True).start()
    try:
        return subprocess.call(command)
    except OSError as exc:
        print(f"zebench_egress: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
