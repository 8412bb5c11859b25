"""A folder of shard files written exactly once (batch inference's
--output_dir): `_PLAN.json` (the shards and the model) before the work,
each `part-*` file written under `.bert-tmp/` and renamed into place whole,
`_SUCCESS` (the example and shard counts) last, once every shard is there.
A rerun into the folder resumes an unfinished run of the same plan and
refuses anything else; nothing in it is deleted or overwritten
(docs/batch_inference.md, "Exactly once, nothing lost"). The driver calls
`ShardFolder.shards_to_run`, `start` and `finish`; the workers `write_shard`.
"""
import dataclasses
import json
import os
import uuid

from absl import logging
import tensorflow as tf

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import OutputExistsError
from bert_tf1.data.io.text_files import TextRange, open_file

PLAN_FILE = "_PLAN.json"
SUCCESS_FILE = "_SUCCESS"
#: Shard files being written, under the output folder.
TEMP_DIR = ".bert-tmp"


@dataclasses.dataclass(frozen=True)
class Shard:
    """Lines `text_range` of a text file (or all records of a TFRecord
    file, `text_range.start` 0); `examples`: how many rows it yields."""
    index: int
    num_shards: int
    text_range: TextRange
    examples: int
    tfrecord_features: tuple = ()

    def file_name(self, suffix):
        return "part-%05d-of-%05d.%s" % (self.index, self.num_shards, suffix)


@dataclasses.dataclass(frozen=True)
class ShardFolder:
    """The folder `path` of one run's `shards` (tuple of Shard), each one's
    file named `Shard.file_name(suffix)`; `model` (a dataclass: what
    computes the rows) goes into the plan with the shards."""
    path: str
    shards: tuple
    model: object
    suffix: str

    def _plan_text(self):
        return json.dumps({
            "shards": [[s.text_range.path, s.text_range.start,
                        s.text_range.end, s.text_range.first_line, s.examples,
                        list(s.tfrecord_features)] for s in self.shards],
            "model": dataclasses.asdict(self.model)}, sort_keys=True,
            default=str, indent=1)

    def unwritten(self, shards=None):
        """Those of `shards` (default: all) whose file is not in the folder."""
        names = set(tf.io.gfile.listdir(self.path))
        return [s for s in (self.shards if shards is None else shards)
                if s.file_name(self.suffix) not in names]

    def _remove_temp(self):
        """Removes TEMP_DIR; returns its path when it was there."""
        temp_dir = os.path.join(self.path, TEMP_DIR)
        if tf.io.gfile.exists(temp_dir):
            tf.io.gfile.rmtree(temp_dir)
            return temp_dir
        return None

    def shards_to_run(self):
        """The shards whose file is not yet in the folder (a new or empty
        folder: all).

        Raises:
            OutputExistsError: a finished run, another run's unfinished one,
                files this driver did not write, or a file at the path.
        """
        if not tf.io.gfile.exists(self.path):
            return list(self.shards)
        if not tf.io.gfile.isdir(self.path):
            raise OutputExistsError(f"--output_dir={self.path} is a file, "
                                    "not a folder: choose a folder")
        names = set(tf.io.gfile.listdir(self.path)) - {TEMP_DIR, TEMP_DIR + "/"}
        if SUCCESS_FILE in names:
            raise OutputExistsError(
                f"--output_dir={self.path} holds a finished run ({SUCCESS_FILE}"
                "); not touching it: choose a new folder")
        if not names:
            return list(self.shards)
        if PLAN_FILE not in names:
            raise OutputExistsError(
                f"--output_dir={self.path} is not empty and holds no "
                f"{PLAN_FILE}: not a folder of this script; choose a new one")
        with tf.io.gfile.GFile(os.path.join(self.path, PLAN_FILE)) as reader:
            if reader.read() != self._plan_text():
                raise OutputExistsError(
                    f"--output_dir={self.path} holds an unfinished run of "
                    "other inputs or another model; choose a new folder")
        left = self.unwritten()
        logging.info("Resuming in %s: %d of %d shard(s) already written",
                     self.path, len(self.shards) - len(left), len(self.shards))
        return left

    def start(self):
        """Before the work (after `shards_to_run`): removes what a killed
        run left in TEMP_DIR, and writes the plan unless it is there."""
        removed = self._remove_temp()
        if removed:
            logging.info("Removed %s (a killed run's partial shards)", removed)
        tf.io.gfile.makedirs(self.path)
        plan_path = os.path.join(self.path, PLAN_FILE)
        if not tf.io.gfile.exists(plan_path):
            write_text_atomically(plan_path, self._plan_text())

    def write_shard(self, shard, write):
        """`shard`'s file, filled by `write(binary file)` under TEMP_DIR and
        then renamed into place; returns its path. A retried bundle writes
        the same rows: replacing is harmless."""
        name = shard.file_name(self.suffix)
        path = os.path.join(self.path, name)
        # Not bert_tf1.data.io.atomic: its per-write temp folder removal races
        # between workers writing into one folder. TEMP_DIR goes at the end.
        temp = os.path.join(self.path, TEMP_DIR,
                            "%s.%s.partial" % (name, uuid.uuid4().hex))
        tf.io.gfile.makedirs(os.path.dirname(temp))
        try:
            with open_file(temp, "wb") as writer:
                write(writer)
            tf.io.gfile.rename(temp, path, overwrite=True)
        finally:
            if tf.io.gfile.exists(temp):
                tf.io.gfile.remove(temp)
        return path

    def finish(self):
        """After the work: removes TEMP_DIR and, every shard's file there,
        writes `_SUCCESS`; returns the examples.

        Raises:
            RuntimeError: a shard's file is missing.
        """
        self._remove_temp()
        missing = [s.file_name(self.suffix) for s in self.unwritten()]
        if missing:
            raise RuntimeError("the pipeline finished without %s" % missing[:5])
        total = sum(s.examples for s in self.shards)
        write_text_atomically(os.path.join(self.path, SUCCESS_FILE), json.dumps(
            {"examples": total, "shards": len(self.shards)}) + "\n")
        return total
