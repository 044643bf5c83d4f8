from textkit import slugify, unique_slug


def test_plain_ascii_title():
    assert slugify("Hello, World!") == "hello-world"


def test_accents_are_transliterated_not_dropped():
    assert slugify("Crème brûlée à la carte") == "creme-brulee-a-la-carte"


def test_letters_without_decomposition():
    assert slugify("Straße in Ærøskøbing") == "strasse-in-aeroskobing"


def test_apostrophes_do_not_split_words():
    assert slugify("Don't Stop Believin’") == "dont-stop-believin"


def test_unique_slug_adds_a_counter():
    assert unique_slug("My Post", {"my-post", "my-post-2"}) == "my-post-3"
