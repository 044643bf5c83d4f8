from comments import render_comment


def test_paragraphs_and_bold():
    assert render_comment("Hello **world**\n\nSecond") == "<p>Hello <strong>world</strong></p>\n<p>Second</p>"


def test_links_to_web_pages_are_kept():
    assert render_comment("[docs](https://example.test/docs)") == '<p><a href="https://example.test/docs">docs</a></p>'


def test_html_in_comments_is_escaped():
    assert "<script>" not in render_comment("<script>alert(1)</script>")


def test_javascript_links_are_not_clickable():
    html = render_comment("[win a prize](javascript:alert(document.cookie))")
    assert "href" not in html
    assert "win a prize" in html


def test_tables():
    html = render_comment("| a | b |\n|---|---|\n| 1 | **2** |")
    assert html == "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td><strong>2</strong></td></tr></table>"


def test_emoji_shortcodes_become_unicode():
    assert render_comment("Shipped :tada:") == "<p>Shipped \U0001F389</p>"
