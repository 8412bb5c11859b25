"""The client side of tests/helpers/script_server.py (no heavy imports: the
README's `python` shim loads it too)."""
import json
import os
import select
import socket


class ServerRun:
    """One script run in the server: `pid` once started, `wait()` for its
    return code (negative: the signal that killed it)."""

    def __init__(self, socket_path, argv, cwd, env, fds):
        """Args: argv [script, args...]; cwd; env dict; fds the child's
        (stdin, stdout, stderr) file descriptors (the caller keeps its own
        copies and closes them).

        Raises:
            OSError: no server listens on socket_path.
        """
        self._connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._connection.connect(socket_path)
        request = json.dumps({"argv": list(argv), "cwd": os.fspath(cwd),
                              "env": dict(env)}) + "\n"
        socket.send_fds(self._connection, [request.encode()], list(fds))
        self._buffer = b""
        started = self._message()
        if "pid" not in started:
            raise RuntimeError(f"script server refused the run: {started}")
        self.pid = started["pid"]

    def _message(self, timeout=None):
        """The server's next JSON line; socket.timeout when none has come
        within `timeout` seconds (None: wait for it)."""
        while b"\n" not in self._buffer:
            if timeout is not None and not select.select(
                    [self._connection], [], [], timeout)[0]:
                raise socket.timeout("no message from the script server")
            chunk = self._connection.recv(65536)
            if not chunk:
                raise RuntimeError("the script server closed the connection")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def wait(self, timeout=None):
        """The child's return code; socket.timeout after `timeout` s (the
        run goes on: wait again)."""
        return self._message(timeout)["returncode"]

    def close(self):
        self._connection.close()
