r"""BERT for sequence tagging (named-entity recognition, BERT paper §5.3).

The google-research/bert repository has no NER script; this one follows the
paper and the flag style of `run_classifier.py` / `run_squad.py`:

    python run_ner.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --do_train=true --train_file=$NER_DIR/train.txt \
      --do_eval=true --eval_file=$NER_DIR/dev.txt \
      --data_format=conll --tag_scheme=iob1 \
      --max_seq_length=128 --doc_stride=64 --train_batch_size=32 \
      --learning_rate=5e-5 --num_train_epochs=3.0 --output_dir=/tmp/ner/

Windows, formats and files: docs/tagging.md. Rerunning a command resumes
training.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.data.tagging.readers import DATA_FORMATS  # noqa: E402
from bert_tf1.modeling.models.feature_tagger import FEATURE_LAYERS  # noqa: E402
from bert_tf1.modeling import BertTokenClassifier  # noqa: E402
from bert_tf1.tasks import cli, script_flags  # noqa: E402
from bert_tf1.tasks.tagging import TaggingConfig, TaggingTask  # noqa: E402

script_flags.define_model_flags(do_lower_case=False)  # a cased model
script_flags.define_output_dir_flag()
flags.DEFINE_string("train_file", None,
                    "Tagged file for training, e.g. train.txt (CoNLL).")
flags.DEFINE_string("eval_file", None,
                    "Tagged file for evaluation with --do_eval, e.g. dev.txt.")
flags.DEFINE_string(
    "predict_file", None,
    "File to tag with --do_predict (in --data_format; a tag column, if "
    "present, is ignored).")
flags.DEFINE_enum(
    "data_format", "conll", DATA_FORMATS,
    "conll: token first column, tag last, -DOCSTART- starts a document; "
    "uner: TAB-separated INDEX TOKEN TAG, '# newdoc' starts a document; "
    "chinese_bio: one character and its tag per line.")
flags.DEFINE_string(
    "tag_scheme", "iob2",
    "Tag scheme of the files: iob1 (original CoNLL-2003), iob2 (= bio) or "
    "bioes (= iobes). Training uses IOB2; outputs are in this scheme.")
flags.DEFINE_integer(
    "doc_stride", 64,
    "When splitting up a long document into windows, how many word pieces "
    "to advance between windows.")
script_flags.define_mode_flags(("train", "eval", "predict"))
script_flags.define_learning_rate_flags(
    learning_rate=None,
    learning_rate_help="The initial learning rate for Adam. Default: 5e-5 "
    "(fine-tuning), 2e-3 with --feature_layers (the BiLSTM trains from "
    "scratch; see docs/tagging.md).")
script_flags.define_lora_flags()
script_flags.define_export_flags()
flags.DEFINE_enum(
    "feature_layers", None, FEATURE_LAYERS,
    "Feature-based approach (paper Table 7) instead of fine-tuning: which "
    "frozen encoder activations feed a two-layer BiLSTM, one of %s. They "
    "are computed once and cached in output_dir." % ", ".join(FEATURE_LAYERS))
flags.DEFINE_integer(
    "lstm_units", None,
    "Units per direction of the BiLSTM of --feature_layers. Default: the "
    "encoder's hidden size (the paper's 768 for BERT-Base).")
script_flags.define_padding_flags()
script_flags.define_evaluation_flags()
script_flags.define_runtime_and_error_flags()

flags.mark_flags_as_required(["vocab_file", "bert_config_file", "output_dir"])


def create_model(bert_config, num_labels):
    """The model this script fine-tunes (not with --feature_layers, whose
    BiLSTM tagger is fixed): edit it (or pass your own to `main` /
    `command`) to change the model. The default is
    `bert_tf1.modeling.BertTokenClassifier`.

    Args:
        bert_config: `bert_tf1.modeling.BertConfig` of --bert_config_file.
        num_labels: size of the label list.
    Returns:
        keras.Model holding one `bert_tf1.modeling.BertModel`, built when
        created; give each layer you add name= (the whole contract:
        docs/custom_models.md):
    - inputs: a dict of int32 [batch_size, seq_length] `input_ids`,
      `input_mask`, `segment_ids`;
    - outputs: float logits [batch_size, seq_length, num_labels];
    - the loss is the script's (mean cross-entropy over the scored tokens) unless the model
      overrides `compute_loss`.
    """
    return BertTokenClassifier(bert_config, num_labels)


main = cli.task_main(TaggingTask, TaggingConfig, create_model)


def command(create_model=None):
    """`python run_ner.py`, `python -m bert_tf1.run_ner` and `bert-run-ner`:
    parses the command line and runs `main` under the one error path;
    `create_model` replaces the script's."""
    cli.main(lambda: main(create_model), script=__name__)


if __name__ == "__main__":
    command()
