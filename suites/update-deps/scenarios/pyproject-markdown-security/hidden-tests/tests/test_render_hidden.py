import emoji_shortcodes
import markdownlite
import markdownlite_tables
import pytest

from comments import render_comment


def test_markdownlite_is_on_the_fixed_release_with_a_matching_tables_extension():
    assert tuple(int(p) for p in markdownlite.__version__.split(".")) >= (3, 1, 2)
    assert markdownlite_tables.__version__.split(".")[0] == markdownlite.__version__.split(".")[0]


def test_emoji_stay_unicode_for_email_digests():
    assert emoji_shortcodes.__version__ == "1.2.0"
    assert "<img" not in render_comment(":smile: :heart: :thumbsup:")


@pytest.mark.parametrize(
    "target",
    ["JavaScript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "vbscript:msgbox(1)", "jAvAsCrIpT:void(0)"],
)
def test_unsafe_link_schemes_are_plain_text(target):
    html = render_comment(f"[click]({target})")
    assert "href" not in html and "click" in html


def test_mailto_and_relative_links_are_kept():
    assert 'href="mailto:team@example.test"' in render_comment("[mail](mailto:team@example.test)")
    assert 'href="/rules"' in render_comment("[rules](/rules)")


def test_links_inside_table_cells_are_checked_too():
    html = render_comment("| x |\n|---|\n| [bad](javascript:alert(1)) |")
    assert html.startswith("<table>") and "href" not in html


def test_quotes_in_link_targets_cannot_break_out_of_the_attribute():
    html = render_comment('[x](https://example.test/"onmouseover="alert(1))')
    assert '"onmouseover="' not in html
