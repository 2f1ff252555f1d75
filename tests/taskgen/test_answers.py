"""Final answers are built from command output by templates."""

from __future__ import annotations

import pytest

from shellagent.taskgen import TemplateError, check_template, render

OUTPUTS = ["/srv/a/x.log\n/srv/a/y.log\n\n", "  42\n"]


@pytest.mark.parametrize(
    ("template", "answer"),
    [
        ("{out}", "42"),
        ("There are {out} lines.", "There are 42 lines."),
        ("Deleted {out1|count}: {out1|names}.", "Deleted 2: x.log, y.log."),
        ("{out1|lines}", "/srv/a/x.log, /srv/a/y.log"),
        ("first {out1|first}, last {out1|last}", "first /srv/a/x.log, last /srv/a/y.log"),
        ("{out2} and {braces} stay", "42 and {braces} stay"),
    ],
)
def test_a_template_takes_its_values_from_the_outputs(template: str, answer: str) -> None:
    assert render(template, OUTPUTS) == answer


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("no output used", "uses no command output"),
        ("{out|shout}", "unknown filter"),
        ("{out3}", "there are 2 commands"),
        ("{out0}", "there are 2 commands"),
    ],
)
def test_a_template_that_cannot_be_built_from_the_outputs_is_refused(
    template: str, problem: str
) -> None:
    with pytest.raises(TemplateError, match=problem):
        check_template(template, 2)
    with pytest.raises(TemplateError):
        render(template, OUTPUTS)
