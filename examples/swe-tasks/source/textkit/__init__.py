"""Small text helpers: slugs, truncation and durations."""

from textkit.durations import format_duration, parse_duration
from textkit.slug import slugify
from textkit.wrap import truncate, word_count

__all__ = ["format_duration", "parse_duration", "slugify", "truncate", "word_count"]
