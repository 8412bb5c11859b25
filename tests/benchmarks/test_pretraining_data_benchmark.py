"""benchmarks/pretraining_data.py runs end to end on a tiny corpus.

Its table must count the records the runs really wrote. The run here is the
pool's: Beam's row starts a child and two SDK worker processes that import
TensorFlow each (~25 CPU s); that Beam with two workers writes the pool's
bytes is docs/pretraining.md's block (tests/test_readme.py), and
tests/data/pretraining/test_beam.py holds the pipeline to the pool's records.
"""
import subprocess
import sys

import pytest
import tensorflow as tf

from tests.conftest import REPO_ROOT, DATA_DIR


def _table_rows(stdout, first_cells):
    rows = {}
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if cells and cells[0] in first_cells:
            rows[cells[0]] = cells
    return rows


def _count_records(paths):
    return sum(sum(1 for _ in tf.data.TFRecordDataset(str(path)))
               for path in paths)


@pytest.mark.slow
def test_table_counts_the_written_records(tmp_path):
    # "original" runs the pool's code path (one shard, one process) and
    # "beam" is covered elsewhere (module docstring): left out to keep the
    # suite short.
    configs = ["pool"]
    process = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "pretraining_data.py"),
         "--source=" + str(DATA_DIR / "pretraining" / "sample_text.txt"),
         # sample_text.txt (4.3 kB) 12 times, in shards of ~4 copies.
         "--corpus_mb=0.05", "--shard_size_mb=0.016", "--workers=2",
         "--sweep_mb=0.02", "--configs=" + ",".join(configs),
         "--work_dir=" + str(tmp_path)],
        capture_output=True, text=True, timeout=900, cwd=REPO_ROOT)
    assert process.returncode == 0, process.stderr[-3000:]

    rows = _table_rows(process.stdout, configs)
    assert sorted(rows) == sorted(configs)
    for name in configs:
        records = int(rows[name][3])
        assert records == _count_records(
            [tmp_path / ("%s_%d.tfrecord" % (name, i)) for i in range(2)])
        assert float(rows[name][5]) > 0          # corpus MB/s
        assert float(rows[name][8]) > 100        # a worker's peak RSS, MB
    # Several shards: the pool ran its two worker processes.
    assert rows["pool"][1] == "2 (2)"
    # The shard-size table has its one row, for a shard of records.
    lines = process.stdout.splitlines()
    header = next(i for i, line in enumerate(lines)
                  if line.startswith("| shard MB |"))
    sweep = [line for line in lines[header + 2:] if line.startswith("|")]
    assert len(sweep) == 1, process.stdout
    assert int(sweep[0].split("|")[2]) > 0
