from textkit import slugify


def test_lowercases_words():
    assert slugify("Hello") == "hello"


def test_joins_two_words():
    assert slugify("hello world") == "hello-world"


def test_drops_accents():
    assert slugify("cafe creme") == slugify("café crème")
