r"""Sentence embeddings you can train: a BERT encoder fine-tuned so that the
cosine of two pooled vectors says how close two texts are.

    python run_embeddings.py --loss=mnrl --do_train=true \
      --train_file=pairs.tsv --do_eval=true --eval_file=queries.tsv \
      --vocab_file=$MODEL/vocab.txt --bert_config_file=$MODEL/bert_config.json \
      --init_checkpoint=$MODEL --pooling=mean --l2_normalize=true \
      --output_dir=/tmp/embedder/

Training rows follow --loss (never guessed; no header line):
  --loss=mnrl    anchor<TAB>positive[<TAB>hard negative] (in-batch negatives)
  --loss=cosent  text_a<TAB>text_b<TAB>score, score in --score_range
  --loss=cosine  the same; the score mapped from --score_range to [0, 1]
--task_name=STS-B or QNLI with --data_dir reads a GLUE folder (STS-B's
scored pairs; QNLI's entailment pairs as question, sentence positives).
--do_eval: --eval_kind=sts (scored pairs: spearman, pearson) or retrieval
(query<TAB>relevant_document rows; the corpus is every document of the file:
mrr@10, ndcg@10, recall@1, recall@10, recall@100), in eval_results.txt.

Writes `*.tf_record`, TF1 checkpoints `model.ckpt-N` (the encoder's `bert/...`
weights), `eval_results.txt`, and the pooling record `pooling.json` that
export, predict_text.py and extract_features.py read: output_dir is a model
folder. Rerunning a command resumes from the newest checkpoint in output_dir.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.modeling import SentenceEmbedder  # noqa: E402
from bert_tf1.tasks import cli, script_flags  # noqa: E402
from bert_tf1.tasks.embeddings import (  # noqa: E402
    EmbeddingsConfig, EmbeddingsTask)

script_flags.define_model_flags()
script_flags.define_output_dir_flag()
flags.DEFINE_string(
    "train_file", None,
    "Training TSV whose rows follow --loss (see --help above).")
flags.DEFINE_string(
    "eval_file", None,
    "Evaluation TSV: scored pairs (--eval_kind=sts) or query, "
    "relevant_document rows (--eval_kind=retrieval).")
flags.DEFINE_string(
    "task_name", None,
    "STS-B or QNLI: read --data_dir's GLUE train.tsv and dev.tsv instead of "
    "--train_file and --eval_file.")
flags.DEFINE_string("data_dir", None, "The GLUE folder of --task_name.")
flags.DEFINE_enum(
    "loss", "mnrl", ["mnrl", "cosent", "cosine"],
    "mnrl: in-batch negatives (multiple-negatives ranking, per replica); "
    "cosent: CoSENT on scored pairs; cosine: cosine-similarity regression.")
flags.DEFINE_enum(
    "pooling", None, ["mean", "cls", "max"],
    "How token vectors become the sentence vector. Default: output_dir's or "
    "the --init_checkpoint folder's pooling.json, else mean.")
flags.DEFINE_bool(
    "l2_normalize", None,
    "Divide each sentence vector by its L2 norm. Default: the recorded "
    "value (as --pooling), else false.")
flags.DEFINE_float("scale", 20.0,
                   "Scale (inverse temperature) of the mnrl and cosent "
                   "losses.")
flags.DEFINE_bool("symmetric", False,
                  "mnrl: add the positive-to-anchor direction.")
flags.DEFINE_string(
    "score_range", "0,5",
    "low,high of the scores of scored pairs (STS-B: 0,5); a score outside "
    "is an error.")
flags.DEFINE_integer(
    "mini_batch_size", 0,
    "mnrl: gradient caching, embedding --train_batch_size examples in "
    "chunks of this many (the same gradients in less memory); 0: off.",
    lower_bound=0)
flags.DEFINE_enum(
    "eval_kind", None, ["sts", "retrieval"],
    "What --do_eval measures. Default: sts for cosent and cosine, "
    "retrieval for mnrl.")
script_flags.define_mode_flags(("train", "eval"))
script_flags.define_learning_rate_flags(learning_rate=2e-5)
script_flags.define_lora_flags()
script_flags.define_export_flags()
script_flags.define_padding_flags()
script_flags.define_evaluation_flags()
script_flags.define_runtime_and_error_flags()

flags.mark_flags_as_required(["vocab_file", "bert_config_file", "output_dir"])


def create_model(bert_config):
    """The model this script fine-tunes: edit it (or pass your own to
    `main` / `command`) to change the model. The default is
    `bert_tf1.modeling.SentenceEmbedder`; the script sets its `pooling`,
    `l2_normalize` and `mini_batch_size` from the flags.

    Args:
        bert_config: `bert_tf1.modeling.BertConfig` of --bert_config_file.
    Returns:
        keras.Model holding one `bert_tf1.modeling.BertModel`, built when
        created; give each layer you add name= (the whole contract:
        docs/custom_models.md):
    - inputs: a dict of int32 [batch_size, num_texts, seq_length]
      `input_ids`, `input_mask`, `segment_ids` (num_texts: 2 or 3 in
      training, 1 or 2 in evaluation);
    - outputs: float embeddings [batch_size, num_texts, hidden] (a model
      other than a SentenceEmbedder pools them itself);
    - the loss is the script's (--loss on those embeddings).
    """
    return SentenceEmbedder(bert_config)


main = cli.task_main(EmbeddingsTask, EmbeddingsConfig, create_model)


def command(create_model=None):
    """`python run_embeddings.py`, `python -m bert_tf1.run_embeddings` and
    `bert-run-embeddings`: parses the command line and runs `main` under the
    one error path; `create_model` replaces the script's."""
    cli.main(lambda: main(create_model), script=__name__)


if __name__ == "__main__":
    command()
