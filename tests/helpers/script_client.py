"""The client side of tests/helpers/script_server.py (no heavy imports: the
README's `python` shim loads it too)."""
import json
import os
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
        self._reader = self._connection.makefile("r", encoding="utf-8")
        started = self._message()
        if "pid" not in started:
            raise RuntimeError(f"script server refused the run: {started}")
        self.pid = started["pid"]

    def _message(self):
        line = self._reader.readline()
        if not line:
            raise RuntimeError("the script server closed the connection")
        return json.loads(line)

    def wait(self, timeout=None):
        """The child's return code; socket.timeout after `timeout` s."""
        self._connection.settimeout(timeout)
        try:
            return self._message()["returncode"]
        finally:
            self._connection.settimeout(None)

    def close(self):
        self._reader.close()
        self._connection.close()
