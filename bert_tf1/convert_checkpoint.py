r"""Converts BERT weights between the TF1 layout, keras-hub and Hugging Face.

    # a released or fine-tuned TF1 checkpoint -> Hugging Face safetensors
    python convert_checkpoint.py --input_format=tf1 \
      --input_path=$BERT_BASE_DIR --output_format=huggingface \
      --output_path=/tmp/bert_hf

    # a Hugging Face BERT -> a TF1 checkpoint run_classifier.py can start from
    python convert_checkpoint.py --input_format=huggingface \
      --input_path=/tmp/bert_hf --output_format=tf1 --output_path=/tmp/bert_tf1

    # TF1 -> keras-hub preset folder (or --output_path=x.weights.h5)
    python convert_checkpoint.py --input_format=tf1 --input_path=$BERT_BASE_DIR \
      --output_format=keras_hub --output_path=/tmp/bert_keras_hub

Formats and what goes along: docs/moving_weights.md. An existing
--output_path is never overwritten.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.tasks import cli, script_flags  # noqa: E402

FORMATS = ["tf1", "keras_hub", "huggingface"]
FLAGS = flags.FLAGS

flags.DEFINE_enum("input_format", "tf1", FORMATS, "Layout of --input_path.")
flags.DEFINE_string("input_path", None, "The model to convert.")
flags.DEFINE_enum("output_format", None, FORMATS, "Layout to write.")
flags.DEFINE_string("output_path", None,
                    "The directory (or keras-hub .weights.h5 file) to create; "
                    "must not exist.")
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model, when "
    "the input does not carry one.")
script_flags.define_vocab_flags(
    vocab_help="The vocabulary file to store with the output (default: the "
    "input's own, if any).",
    do_lower_case_help="Whether the vocab is lower-cased (stored with the "
    "output's vocab). Default: what the input's tokenizer says (a Hugging "
    "Face tokenizer.json normaliser, or the tokenizer_config.json beside the "
    "vocab), else True; a contradicting value is an error.")
flags.DEFINE_bool("encoder_only", False,
                  "Drop the heads (cls/*, output_*); keep bert/* only.")
flags.DEFINE_string(
    "label_list_file", None,
    "A tagger's tags, one per line in id order (run_ner.py's label_list.txt; "
    "default: the label_list.txt beside a tf1 input). Written as Hugging "
    "Face id2label, or as label_list.txt beside a tf1 output.")
cli.define_common_flags(checkpoint_flags=False)

flags.mark_flags_as_required(["input_path", "output_format", "output_path"])


def run():
    """Flags -> `ConversionConfig` -> `ConversionTask.run()`."""
    from bert_tf1.tasks.conversion import ConversionConfig, ConversionTask

    given = FLAGS.do_lower_case if FLAGS["do_lower_case"].present else None
    path = ConversionTask(cli.config_from_flags(
        ConversionConfig, do_lower_case=given)).run()
    print(f"Wrote {path}")


def command():
    """`python convert_checkpoint.py`, `python -m bert_tf1.convert_checkpoint`
    and `bert-convert-checkpoint`: parses the command line and runs `run`
    under the one error path."""
    cli.main(run, script=__name__)


if __name__ == "__main__":
    command()
