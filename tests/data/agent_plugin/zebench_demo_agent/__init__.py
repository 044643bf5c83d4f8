"""A tiny agent plugin: ``demo-notes`` writes a NOTES.md and answers."""

from harness.agents.base import AgentResult


class NotesAgent:
    """Leaves a note in the workspace through the run's sandbox, and says so."""

    name = "demo-notes"

    def __init__(self, model=None, **options):
        self.model = model

    def run(self, ctx):
        result = ctx.sandbox.run("echo 'looked at the task' > NOTES.md && ls")
        return AgentResult(status="completed" if result.ok else "failed", final_answer="Left a note.",
                           transcript=[{"role": "assistant", "content": result.stdout}], cost_usd=0.0)
