"""README's two set-up commands are the ones CI runs."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_ci_runs_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    m = re.search(r"<!-- test-command -->\s*```(?:bash|sh)?\s*\n(.+?)\n```", readme, re.S)
    assert m, "README must mark its test command with <!-- test-command -->"
    cmd = m.group(1).strip()
    assert cmd in ci.splitlines(), f"{cmd!r} is not a line of .ci/run"


def test_readme_has_demo_command():
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"<!-- demo-command -->\s*```(?:bash|sh)?\s*\npip install \. && ggml-cy demo",
                     readme)
