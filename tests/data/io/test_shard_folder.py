"""bert_tf1.data.io.shard_folder without Beam: plan first, whole shard files,
_SUCCESS last; a rerun resumes its own plan and refuses any other folder."""
import dataclasses
import json
import os

import pytest

from bert_tf1.data.io.errors import OutputExistsError
from bert_tf1.data.io.shard_folder import (PLAN_FILE, SUCCESS_FILE, TEMP_DIR,
                                           Shard, ShardFolder)
from bert_tf1.data.io.text_files import TextRange


@dataclasses.dataclass(frozen=True)
class Model:
    name: str


def _folder(path, model="a", examples=(2, 3)):
    shards = tuple(Shard(index, len(examples), TextRange("in.txt", index, None,
                                                         1), count)
                   for index, count in enumerate(examples))
    return ShardFolder(str(path), shards, Model(model), "jsonl")


def _write(folder, shard, text):
    return folder.write_shard(shard, lambda writer: writer.write(text))


def test_a_run_writes_plan_whole_shards_and_success_last(tmp_path):
    folder = _folder(tmp_path / "out")
    assert folder.shards_to_run() == list(folder.shards)   # no folder: all
    folder.start()
    assert os.listdir(folder.path) == [PLAN_FILE]
    path = _write(folder, folder.shards[0], b"one\n")
    assert os.path.basename(path) == "part-00000-of-00002.jsonl"
    assert open(path, "rb").read() == b"one\n"
    assert os.listdir(os.path.join(folder.path, TEMP_DIR)) == []
    assert folder.unwritten() == [folder.shards[1]]
    assert folder.unwritten(folder.shards[:1]) == []
    with pytest.raises(RuntimeError, match="part-00001-of-00002.jsonl"):
        folder.finish()
    assert SUCCESS_FILE not in os.listdir(folder.path)
    _write(folder, folder.shards[1], b"two\n")
    assert folder.finish() == 5
    assert sorted(os.listdir(folder.path)) == [
        PLAN_FILE, SUCCESS_FILE, "part-00000-of-00002.jsonl",
        "part-00001-of-00002.jsonl"]
    assert json.loads(open(os.path.join(folder.path, SUCCESS_FILE)).read()
                      ) == {"examples": 5, "shards": 2}
    with pytest.raises(OutputExistsError, match="finished run"):
        folder.shards_to_run()


def test_a_rerun_resumes_its_own_plan_and_refuses_another(tmp_path):
    folder = _folder(tmp_path)
    folder.start()
    _write(folder, folder.shards[1], b"two\n")
    # What a killed worker left half-written goes when the rerun starts.
    partial = os.path.join(folder.path, TEMP_DIR, "x.partial")
    os.makedirs(os.path.dirname(partial), exist_ok=True)
    open(partial, "wb").close()
    again = _folder(tmp_path)
    assert again.shards_to_run() == [again.shards[0]]
    again.start()
    assert not os.path.exists(os.path.join(folder.path, TEMP_DIR))
    for other in (_folder(tmp_path, model="b"),
                  _folder(tmp_path, examples=(2, 4))):
        with pytest.raises(OutputExistsError, match="unfinished run of other"):
            other.shards_to_run()
    os.remove(os.path.join(folder.path, PLAN_FILE))
    with pytest.raises(OutputExistsError, match="holds no _PLAN.json"):
        again.shards_to_run()
    assert sorted(os.listdir(folder.path)) == ["part-00001-of-00002.jsonl"]
