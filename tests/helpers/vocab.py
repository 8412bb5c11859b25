"""A tokenizer over a small hand-written vocab, for feature tests whose
expected ids are worked out by hand."""
from bert_tf1.data.tokenization import FullTokenizer


def tokenizer_for(tmp_path_factory, tokens, do_lower_case=True):
    """`FullTokenizer` of a vocab file holding `tokens`, one per line (the
    id of a token is its index)."""
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return FullTokenizer(str(path), do_lower_case=do_lower_case)
