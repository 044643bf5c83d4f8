"""The careless patch of ``bench check --careless``: :class:`PatchAgent` applies a patch to
the workspace in the run's sandbox, so that a plausible but incomplete fix is graded as an
agent's work would be. It is registered as :data:`PATCH_AGENT` only for a check.
"""

from __future__ import annotations

import posixpath
from typing import Any

from harness.agents.base import AgentContext, AgentResult

#: The agent that applies a careless patch (registered for a check only).
PATCH_AGENT = "careless-patch"


class PatchAgent:
    """Applies a patch to the workspace (``git apply``, else ``patch -p1`` where git is not
    installed), in the run's sandbox: a careless fix played as an agent's work."""

    name = PATCH_AGENT

    def __init__(self, model: str | None = None, patch: str | None = None, patch_name: str = "the patch",
                 **options: Any) -> None:
        self.model = model
        self.patch = patch
        self.patch_name = patch_name

    def run(self, ctx: AgentContext) -> AgentResult:
        transcript: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        if not self.patch:
            return AgentResult(status="error", error="no patch to apply", cost_usd=0.0, transcript=transcript)
        data = self.patch.encode("utf-8", "surrogateescape")  # as read: any bytes the file held
        # git must not take a repository enclosing the workspace for the project's (it would
        # read the patch's paths from that repository's root).
        inner = ctx.sandbox.inner_workspace.rstrip("/") or "/"
        env = {"GIT_CEILING_DIRECTORIES": posixpath.dirname(inner) or "/"}
        timeout = max(1.0, min(120.0, ctx.remaining_s()))
        result = ctx.sandbox.run("git apply --whitespace=nowarn", stdin_data=data, env=env, timeout_s=timeout)
        tool = "git apply"
        if result.exit_code == 127:
            result = ctx.sandbox.run("patch -p1 --batch --forward --no-backup-if-mismatch", stdin_data=data,
                                     timeout_s=timeout)
            tool = "patch -p1"
        if result.exit_code == 127:
            return AgentResult(status="error", error="neither git nor patch is installed: cannot apply the patch",
                               cost_usd=0.0, transcript=transcript)
        if not result.ok:
            why = (result.stderr or result.stdout).strip().splitlines()[:3]
            return AgentResult(status="error", cost_usd=0.0, transcript=transcript,
                               error=f"{self.patch_name} does not apply to the fixture ({tool}: "
                                     f"{'; '.join(why) or result.outcome()})")
        answer = f"Applied {self.patch_name} with {tool}."
        transcript.append({"role": "assistant", "content": answer})
        return AgentResult(status="completed", final_answer=answer, model=self.model, cost_usd=0.0,
                           transcript=transcript)

