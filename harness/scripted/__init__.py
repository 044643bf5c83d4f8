"""A scripted model server: plays a script of tool calls in the wire format each agent speaks.

Agent CLIs (and the harness's own tool-loop agents) talk to a model over one of four wire
formats. :class:`ScriptedServer` serves all four on loopback and answers every request with
the next step of a :class:`Script` (write a file, run a command, call a tool, say the final
answer), in the agent's own tools. Tests drive real agents with it; ``bench mock-model
SCRIPT`` serves it to check an agent integration offline.
"""

from harness.scripted.script import Answer, Call, Script, ScriptError, Tool, load_script, parse_script
from harness.scripted.server import SCRIPTED_MODEL, ScriptedServer

__all__ = ["SCRIPTED_MODEL", "Answer", "Call", "Script", "ScriptError", "ScriptedServer", "Tool", "load_script",
           "parse_script"]
