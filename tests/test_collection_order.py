"""tests/conftest.py's LONGEST_FIRST names test files that exist (a renamed
file would silently lose its place at the front) and puts them first."""
from tests import conftest


class _Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def test_longest_first_files_exist():
    for path in conftest.LONGEST_FIRST:
        assert (conftest.REPO_ROOT / path).is_file(), path
    assert len(set(conftest.LONGEST_FIRST)) == len(conftest.LONGEST_FIRST)


def test_longest_files_come_first_and_the_others_keep_their_order():
    second, first = conftest.LONGEST_FIRST[1], conftest.LONGEST_FIRST[0]
    items = [_Item(nodeid) for nodeid in (
        "tests/a.py::one", second + "::x", "tests/b.py::two",
        first + "::y", first + "::z", "tests/a.py::three")]
    conftest.pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == [
        first + "::y", first + "::z", second + "::x", "tests/a.py::one",
        "tests/b.py::two", "tests/a.py::three"]
