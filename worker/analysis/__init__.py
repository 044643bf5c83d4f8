"""Analysis shared by the CLI and the worker: stdlib only, so the Cloudflare Python Worker can run it.

The modules of this package are pure functions over plain numbers (``stats``: tests,
intervals, effect sizes, power and pass@k). They import nothing but the Python standard
library and each other (``tests/test_dependency_rules.py`` checks it), so the same code answers
in ``bench``, in ``worker dev`` and in the results worker running in Pyodide.
"""
