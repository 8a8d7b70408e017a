"""docs/python.md's worked example, run as the page shows it (from a
folder holding models/one-layer.mlir, as the repository's root does)."""

import os
import re
import shutil

SOURCE = os.environ.get("LCC_SOURCE_DIR", os.getcwd())


def test_worked_example(tmp_path, monkeypatch):
    with open(os.path.join(SOURCE, "docs", "python.md")) as f:
        page = f.read()
    example = re.search(r"<!-- example -->\n```python\n(.*?)```", page,
                        re.S).group(1)
    (tmp_path / "models").mkdir()
    shutil.copy(os.path.join(SOURCE, "models", "one-layer.mlir"),
                tmp_path / "models")
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/python.md", "exec"), {})
    assert (tmp_path / "one.safetensors").exists()
