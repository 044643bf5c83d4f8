"""``ask_user`` answers from a scenario's ``oracle-answers.json``.

Matching rule, in order:

1. **Normalised exact match**: question and known questions are compared lowercased, with
   runs of whitespace collapsed and punctuation at the ends stripped.
2. **Closest question**: otherwise the known question most similar to the asked one
   (``difflib.SequenceMatcher`` ratio on the normalised texts) answers, when its ratio is at
   least :data:`SIMILARITY_THRESHOLD`.
3. **Default answer**: otherwise :data:`DEFAULT_ANSWER`.

Every question is logged with the answer given and how it was chosen.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

SIMILARITY_THRESHOLD = 0.6
DEFAULT_ANSWER = (
    "I have no specific guidance on that. Use your best judgement, follow the task description "
    "and keep the existing behaviour unless the task says otherwise."
)

_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.?!,;:'\"`"


def normalise_question(text: str) -> str:
    return _SPACES.sub(" ", text.strip().lower()).strip(_EDGE_PUNCT)


@dataclass
class Oracle:
    answers: dict[str, str]
    threshold: float = SIMILARITY_THRESHOLD
    default_answer: str = DEFAULT_ANSWER
    log: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._normalised = {normalise_question(q): (q, a) for q, a in self.answers.items()}

    def ask(self, question: str) -> str:
        """The answer to ``question`` by the matching rule above; the exchange is logged."""
        norm = normalise_question(question)
        if norm in self._normalised:
            matched, answer = self._normalised[norm]
            return self._record(question, answer, "exact", matched, 1.0)
        best: tuple[float, str, str] | None = None
        for known_norm, (known, answer) in self._normalised.items():
            ratio = difflib.SequenceMatcher(None, norm, known_norm).ratio()
            if best is None or ratio > best[0]:
                best = (ratio, known, answer)
        if best is not None and best[0] >= self.threshold:
            return self._record(question, best[2], "similar", best[1], best[0])
        return self._record(question, self.default_answer, "default", "", best[0] if best else 0.0)

    def _record(self, question: str, answer: str, how: str, matched: str, score: float) -> str:
        self.log.append(
            {"question": question, "answer": answer, "match": how, "matched_question": matched, "similarity": f"{score:.2f}"}
        )
        return answer
