"""run_ner.py's task with the no-BERT baseline as the model."""
from demos.ner.bilstm_tagger import WordPieceBiLSTMTagger
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.tagging import TaggingTask


class WordPieceBiLSTMTaggingTask(TaggingTask):
    """`TaggingTask` training `WordPieceBiLSTMTagger` instead of BERT.

    Raises (from `prepare()`, beyond `TaggingTask`'s):
        UserError: an init_checkpoint or feature_layers is given.
    """

    def build_model(self):
        return WordPieceBiLSTMTagger(self.bert_config, len(self.label_list),
                                     lstm_units=self.lstm_units)

    def check_task(self):
        if self.feature_based:
            raise UserError("the word-piece BiLSTM has no BERT encoder; drop "
                            "--feature_layers")
        if self.config.init_checkpoint:
            raise UserError("the word-piece BiLSTM trains from random "
                            "embeddings; drop --init_checkpoint")
        super().check_task()
