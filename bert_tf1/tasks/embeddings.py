"""Sentence embeddings (run_embeddings.py): contrastive or scored-pair
fine-tuning of a `SentenceEmbedder`, evaluated by STS correlations or
retrieval metrics; files as run_classifier.py's plus the pooling record
(`bert_tf1.modeling.pooling.POOLING_FILE`) in output_dir.
"""
import dataclasses
import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf1.data.embeddings import examples as data
from bert_tf1.data.embeddings import records
from bert_tf1.data.embeddings.metrics import (RETRIEVAL_METRICS,
                                              retrieval_metrics,
                                              sts_correlations)
from bert_tf1.data.glue.processors import get_processor
from bert_tf1.modeling import SentenceEmbedder
from bert_tf1.modeling.checkpoints import GLOBAL_STEP
from bert_tf1.modeling.models import embedding_losses, losses
from bert_tf1.modeling.pooling import (POOLING_FILE, POOLINGS,
                                       read_pooling_record,
                                       write_pooling_record)
from bert_tf1.modeling.training.runtime import is_multi_worker
from bert_tf1.tasks import checks
from bert_tf1.tasks.configs import EvaluatingConfig
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.fine_tuning import FineTuningTask
from bert_tf1.tasks.model_building import build_script_model
from bert_tf1.tasks.modes import MODES

#: --task_name values read from a GLUE folder (--data_dir).
GLUE_TASKS = ("STS-B", "QNLI")
#: --loss -> the Keras loss class.
LOSS_CLASSES = {"mnrl": embedding_losses.MultipleNegativesRankingLoss,
                "cosent": embedding_losses.CoSENTLoss,
                "cosine": embedding_losses.CosineSimilarityLoss}
STS_METRICS = ("spearman", "pearson")


@dataclasses.dataclass(kw_only=True)
class EmbeddingsConfig(EvaluatingConfig):
    """run_embeddings.py's flags (their help: bert_tf1/run_embeddings.py).
    `pooling`, `l2_normalize`: None takes the record of output_dir, then of
    the --init_checkpoint folder, else mean and False. `eval_kind`: None is
    sts for the scored-pair losses, retrieval for mnrl."""
    train_file: str = None
    eval_file: str = None
    task_name: str = None
    data_dir: str = None
    loss: str = "mnrl"
    pooling: str = None
    l2_normalize: bool = None
    scale: float = 20.0
    symmetric: bool = False
    score_range: str = "0,5"
    mini_batch_size: int = 0
    eval_kind: str = None
    learning_rate: float = 2e-5


def _model_folder(path):
    """The folder of a checkpoint path (itself when a folder), or None."""
    if not path:
        return None
    return path if tf.io.gfile.isdir(path) else os.path.dirname(path)


def resolve_pooling(config):
    """(pooling, l2_normalize, record path or None) for this run.

    The flags win when given; each must agree with the pooling record of
    output_dir and of the --init_checkpoint folder (when they hold one).

    Raises:
        UserError: one line naming the flag and the record file that
            disagree, or a record that cannot be read.
    """
    records_found = []
    for folder in (config.output_dir, _model_folder(config.init_checkpoint)):
        if folder and tf.io.gfile.isdir(folder):
            record = read_pooling_record(folder)
            if record is not None:
                records_found.append(
                    (record, os.path.join(folder, POOLING_FILE)))
    if config.pooling is not None and config.pooling not in POOLINGS:
        raise UserError(f"--pooling={config.pooling}: expected one of "
                        f"{', '.join(POOLINGS)}")
    first = records_found[0] if records_found else None
    pooling = config.pooling or (first[0][0] if first else "mean")
    l2_normalize = (config.l2_normalize if config.l2_normalize is not None
                    else (first[0][1] if first else False))
    for (recorded_pooling, recorded_l2), path in records_found:
        if recorded_pooling != pooling:
            raise UserError(
                f"--pooling={pooling} disagrees with {path} (pooling="
                f"{recorded_pooling}); pass --pooling={recorded_pooling} or "
                "another --output_dir")
        if recorded_l2 != l2_normalize:
            raise UserError(
                f"--l2_normalize={str(l2_normalize).lower()} disagrees with "
                f"{path} (l2_normalize={str(recorded_l2).lower()}); pass "
                f"--l2_normalize={str(recorded_l2).lower()} or another "
                "--output_dir")
    return pooling, l2_normalize


def attach_loss(model, loss):
    """The script's loss as `model.compute_loss`: `loss(y, y_pred,
    sample_weight)` scaled for replicas (fit and the strategy loop both
    call it); None without labels (Keras' inference calls)."""
    def compute_loss(x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        if y is None:
            return None
        return losses.scale_for_replicas(loss(y, y_pred, sample_weight))

    model.compute_loss = compute_loss


class EmbeddingsTask(FineTuningTask):
    """SentenceEmbedder fine-tuning and evaluation.

    Raises (from `prepare()`, before anything is written):
        UserError: one line naming the flag, or the file and line: an
            unknown --loss/--eval_kind/--task_name, a data row of the wrong
            shape for --loss, a score outside --score_range, an empty text,
            a --pooling or --l2_normalize that disagrees with a pooling
            record, --mini_batch_size with a setup that cannot use it.
    """

    modes = ("train", "eval")
    records_name = "sentence-embedding"
    eval_summaries = True

    def __init__(self, config, create_model=None):
        super().__init__(config, create_model)
        if config.loss not in data.LOSSES:
            raise UserError(f"--loss={config.loss}: expected one of "
                            f"{', '.join(data.LOSSES)}")
        if config.eval_kind is None:
            config.eval_kind = "retrieval" if config.loss == "mnrl" else "sts"
        if config.eval_kind not in data.EVAL_KINDS:
            raise UserError(f"--eval_kind={config.eval_kind}: expected one "
                            f"of {', '.join(data.EVAL_KINDS)}")
        if config.task_name is not None and \
                config.task_name.upper() not in GLUE_TASKS:
            raise UserError(f"--task_name={config.task_name}: expected one of "
                            f"{', '.join(GLUE_TASKS)} (or leave it out and "
                            "pass --train_file / --eval_file)")
        self.score_range = data.parse_score_range(config.score_range)
        self.num_texts = {}
        self.retrieval = None  # (num_queries, relevant) of the eval file

    # -- checks and the model ---------------------------------------------------

    def check_task(self):
        config = self.config
        if config.mini_batch_size and config.mini_batch_size < 0:
            raise UserError(f"--mini_batch_size={config.mini_batch_size}: "
                            "expected a number of examples > 0 (0: off)")
        if config.mini_batch_size and config.loss != "mnrl":
            raise UserError(f"--mini_batch_size needs --loss=mnrl (gradient "
                            f"caching of in-batch negatives), got --loss="
                            f"{config.loss}")
        if config.mini_batch_size and config.runtime.use_xla:
            raise UserError("--mini_batch_size with --use_xla: gradient "
                            "caching loops over chunks of any size, which "
                            "XLA cannot compile; drop one of them")
        if config.mini_batch_size and is_multi_worker(self.strategy):
            raise UserError("--mini_batch_size on several workers: gradient "
                            "caching runs in Keras fit's train step, which "
                            "multi-worker training cannot use; leave it out")
        if config.task_name and not config.data_dir:
            raise UserError(f"--task_name={config.task_name} needs --data_dir "
                            "(the GLUE folder with train.tsv and dev.tsv)")
        if config.task_name and (config.train_file or config.eval_file):
            raise UserError(f"--task_name={config.task_name} reads --data_dir;"
                            " leave out --train_file and --eval_file")
        glue = (config.task_name or "").upper()
        if glue == "STS-B" and config.loss == "mnrl":
            raise UserError("--task_name=STS-B holds scored pairs: pass "
                            "--loss=cosent or --loss=cosine")
        if glue == "QNLI" and config.loss != "mnrl":
            raise UserError("--task_name=QNLI gives (question, sentence) "
                            "positives: pass --loss=mnrl")
        self.pooling, self.l2_normalize = resolve_pooling(config)

    def build_model(self):
        model = build_script_model(self.create_model or SentenceEmbedder,
                                   (self.bert_config,), SentenceEmbedder)
        if isinstance(model, SentenceEmbedder):
            model.pooling = self.pooling
            model.l2_normalize = self.l2_normalize
            model.mini_batch_size = self.config.mini_batch_size or None
        config = self.config
        loss = LOSS_CLASSES[config.loss]
        kwargs = {} if config.loss == "cosine" else {"scale": config.scale}
        if config.loss == "mnrl":
            kwargs["symmetric"] = config.symmetric
        if isinstance(model, SentenceEmbedder) or (
                type(model).compute_loss is keras.Model.compute_loss):
            attach_loss(model, loss(**kwargs))
        # else: a model of your own with its own compute_loss keeps it.
        return model

    def padding_example(self):
        return None  # Every batch of an embedding evaluation is real.

    # -- data -------------------------------------------------------------------

    def data_file(self, mode):
        config = self.config
        if config.task_name:
            name = "train.tsv" if mode == "train" else "dev.tsv"
            return os.path.join(config.data_dir, name)
        return getattr(config, f"{mode}_file")

    def _glue_examples(self, mode):
        glue = self.config.task_name.upper()
        split = MODES[mode].split
        path = self.data_file(mode)
        checks.check_data_file(path, f"--task_name={self.config.task_name}")
        processor = get_processor(glue)
        read = getattr(processor, f"get_{split}_examples")
        rows = read(self.config.data_dir)
        if glue == "STS-B":
            loss = self.config.loss if mode == "train" else "cosent"
            return [data.scored_pair(row.text_a, row.text_b, row.label,
                                     f"{path} ({row.guid})", loss,
                                     self.score_range) for row in rows]
        pairs = [(row.text_a, row.text_b) for row in rows
                 if row.label == "entailment"]
        if mode == "train":
            return [data.EmbeddingExample(pair, None, path) for pair in pairs]
        return data.retrieval_set(pairs)

    def read_examples(self, mode):
        config = self.config
        if config.task_name:
            found = self._glue_examples(mode)
        else:
            path, flag = self.data_file(mode), f"--{mode}_file"
            if not path:
                raise UserError(f"--do_{mode} needs {flag}, but none was "
                                "given")
            checks.check_data_file(path, flag)
            if mode == "train":
                found = data.read_training_file(path, config.loss,
                                                self.score_range, flag)
            elif config.eval_kind == "sts":
                found = data.read_sts_file(path, self.score_range, flag)
            else:
                found = data.read_retrieval_file(path, flag)
        if mode == "eval" and config.eval_kind == "retrieval" \
                and isinstance(found, tuple):
            queries, documents, relevant = found
            self.retrieval = (len(queries), relevant)
            found = [data.EmbeddingExample((text,), None, "")
                     for text in queries + documents]
        elif mode == "eval" and config.eval_kind == "retrieval":
            raise UserError(f"--eval_kind=retrieval with --task_name="
                            f"{config.task_name}: STS-B is scored pairs; pass "
                            "--eval_kind=sts")
        elif mode == "eval" and config.eval_kind == "sts" and \
                len(found[0].texts) != 2:
            raise UserError(f"--eval_kind=sts with --task_name="
                            f"{config.task_name}: pass --eval_kind=retrieval")
        checks.check_examples(found, self.data_file(mode), f"--do_{mode}")
        self.num_texts[mode] = len(found[0].texts)
        return found

    def write_features(self, examples, path, mode):
        return records.write_embedding_records(
            examples, path, self.num_texts[mode], self.config.max_seq_length,
            self.tokenizer)

    def make_dataset(self, mode, examples, folder, batch_size):
        """As `FineTuningTask.make_dataset`; a training run resumed from
        output_dir skips the batches its checkpoint has trained on, so it
        continues the uninterrupted run's data stream (with --seed: the
        same shuffle), not a restarted one."""
        dataset, path = super().make_dataset(mode, examples, folder,
                                             batch_size)
        if mode == "train" and self.checkpoint.source == "output_dir":
            step = int(tf.train.load_checkpoint(self.checkpoint.path)
                       .get_tensor(GLOBAL_STEP))
            accumulation = self.config.runtime.gradient_accumulation_steps
            dataset = dataset.skip(step * int(accumulation or 1))
        return dataset, path

    def read_dataset(self, path, mode, batch_size):
        return records.embedding_dataset(
            path, self.num_texts[mode], self.config.max_seq_length,
            mode == "train", batch_size, seed=self.config.runtime.seed,
            include_is_real_example=mode != "train")

    def before_training(self):
        """Records the pooling in output_dir (chief only)."""
        if self.is_chief:
            write_pooling_record(self.config.output_dir, self.pooling,
                                 self.l2_normalize)

    # -- evaluation -------------------------------------------------------------

    def metric_names(self):
        if self.config.eval_kind == "sts":
            return list(STS_METRICS)
        return list(RETRIEVAL_METRICS)

    def compute_results(self, outputs, labels, weights, num_actual):
        """eval_results.txt: spearman and pearson (sts) or mrr@10, ndcg@10,
        recall@1/10/100 (retrieval), and global_step."""
        outputs = np.asarray(outputs, np.float64)[:num_actual]
        if self.config.eval_kind == "sts":
            result = sts_correlations(outputs[:, 0], outputs[:, 1],
                                      labels[:num_actual])
        else:
            num_queries, relevant = self.retrieval
            result = retrieval_metrics(outputs[:num_queries, 0],
                                       outputs[num_queries:, 0], relevant)
        result["global_step"] = self.global_step
        return result

    def write_outputs(self, outputs, num_actual):
        raise NotImplementedError("run_embeddings.py has no predict mode")
