"""Output that TensorFlow's C++ code and the converters write straight to
file descriptor 2, filtered: `tensorflow_noise_filtered` captures it around a
block and replays every line but the known noise (the scripts' start-up
filter is `bert_tf1.tasks.quiet_start`). Nothing is filtered with
`TF_CPP_MIN_LOG_LEVEL` 0 or 1.
"""
import contextlib
import os
import re
import sys
import tempfile

# An "E" line at the first run of some graphs on CPUs without AVX-512 with
# oneDNN on, although nothing failed.
# LiteRT's interpreter says at every load that it uses XNNPACK.
RUNTIME_NOISE = re.compile(
    r"^(E\d{4} .*oneDNN supports DT_\w+ only on platforms with AVX-512"
    r"|INFO: Created TensorFlow Lite XNNPACK delegate for CPU\.)")


@contextlib.contextmanager
def tensorflow_noise_filtered(noise=RUNTIME_NOISE):
    """Runs the block with file descriptor 2 captured, then replays on
    stderr every captured line that `noise` does not match (nothing is
    captured with TF_CPP_MIN_LOG_LEVEL=0 or 1)."""
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip() in ("0", "1"):
        yield
        return
    sys.stderr.flush()
    saved_stderr = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved_stderr, 2)
            os.close(saved_stderr)
            captured.seek(0)
            text = captured.read().decode("utf-8", errors="replace")
            kept = lines_to_keep(text, noise)
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")
                sys.stderr.flush()


def lines_to_keep(text, noise):
    """The non-blank lines of captured output that `noise` does not match
    (list of str, in order)."""
    return [line for line in text.splitlines()
            if line.strip() and not noise.match(line)]
