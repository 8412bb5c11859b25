"""What a model's accuracy on the next-sentence demo task means.

    python demos/next_sentence_report.py --data_dir=../shared/data/pretraining \\
        --dev_file=/tmp/mc_demo/task/dev.tsv \\
        --test_results=/tmp/mc_demo/model/test_results.tsv

Prints, for the dev rows: chance, the accuracy a model that only tells
Wikipedia from the novel would get (guessing among the endings of the
context's source), and the model's accuracy (from test_results.tsv,
argmax against the labels) overall and split by how many of a row's
distractors share the context's source: where all do, the source says
nothing and chance is 1 / num_choices
(demos/next_sentence/next_sentence_analysis.py).
"""
import argparse
import os
import sys

# The checkout this script is in comes first (an installed copy may be older).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bert_tf1.data.io.errors import UserError  # noqa: E402
from demos.next_sentence import next_sentence_analysis as analysis  # noqa: E402
from demos.next_sentence.next_sentence_task import (  # noqa: E402
    read_shared_documents)
from bert_tf1.data.multiple_choice.readers import read_examples  # noqa: E402
from demos.next_sentence.results_reader import read_test_results  # noqa: E402


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default="../shared/data/pretraining",
                        help="the text the task was built from")
    parser.add_argument("--dev_file", required=True,
                        help="dev.tsv of demos/build_next_sentence_choice.py")
    parser.add_argument("--test_results", default=None,
                        help="test_results.tsv of run_multiple_choice.py "
                             "--do_predict --predict_file=<dev_file>")
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse_args(argv)
    try:
        examples = read_examples(args.dev_file, "tsv")
        sources = analysis.sentence_sources(
            read_shared_documents(args.data_dir))
        same = analysis.same_source_distractors(examples, sources)
        probabilities = (read_test_results(args.test_results)
                         if args.test_results else None)
    except (UserError, KeyError) as error:
        print("error: %s" % error, file=sys.stderr)
        return 1
    num_choices = examples[0].num_choices
    print("dev rows: %d, %d choices: chance %.1f%%" % (
        len(examples), num_choices, 100.0 / num_choices))
    print("source shortcut (guess among the endings of the context's "
          "source): %.1f%%" % (
              100 * analysis.source_shortcut_accuracy(same)))
    if probabilities is None:
        return 0
    try:
        table = analysis.accuracy_by_same_source(probabilities, examples, same)
    except ValueError as error:
        print("error: %s: %s" % (args.test_results, error), file=sys.stderr)
        return 1
    rows, accuracy = table.pop("all")
    print("model: %.1f%% of %d rows" % (100 * accuracy, rows))
    print("same-source distractors  rows  model  source shortcut")
    for count, (rows, accuracy) in table.items():
        print("%23d  %4d  %4.1f%%  %4.1f%%" % (count, rows, 100 * accuracy,
                                               100.0 / (1 + count)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
