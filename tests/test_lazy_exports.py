"""The packages whose names load on first use (bert_tf1.lazy_exports):
importing them loads no TensorFlow, and every listed name resolves."""
import subprocess
import sys

import pytest

import bert_tf1
import bert_tf1.tasks
from bert_tf1.data import tokenization
from tests.conftest import REPO_ROOT

PACKAGES = (bert_tf1, bert_tf1.tasks, tokenization)


def test_importing_the_packages_loads_no_tensorflow():
    code = ("import sys, bert_tf1, bert_tf1.tasks, bert_tf1.data.tokenization\n"
            "print(sorted(m for m in ('tensorflow', 'keras') "
            "if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_every_listed_name_resolves_and_is_listed(package):
    names = getattr(package, "__all__", ["BertPreprocessor"])
    for name in names:
        value = getattr(package, name)
        assert value.__name__ == name
        assert name in dir(package)
    with pytest.raises(AttributeError,
                       match=f"module '{package.__name__}' has no attribute "
                             "'NotAName'"):
        getattr(package, "NotAName")
