"""What the tests share, one module per subject; test modules import from here, never from
each other.

- :mod:`support.worker`: the worker core in-process (a fake D1 binding, ``CoreApi``), the ``api``
  and ``local`` fixtures over every backend, and run bodies as clients post them;
- :mod:`support.datasets`: dataset runs against the mock model server (the ``env`` and
  ``mock_server`` fixtures, a small dataset whose outcome is known, run options);
- :mod:`support.fleets`: fleets over repositories holding a generated dataset (the ``mock``
  fixture, manifests, running a fleet);
- :mod:`support.providers`: provider key variables, and the endpoints and bodies respx answers;
- :mod:`support.stub_model`: a loopback model server with a chosen capacity, rate limit or failure;
- :mod:`support.reports`: reading HTML reports and their SVG charts as a browser would;
- :mod:`support.results`: run records as tests post them;
- :mod:`support.scenarios`: scenario definitions for :mod:`scenario_builders`;
- :mod:`support.specialists`: copies of the shipped specialist templates;
- :mod:`support.mint`: a template and a batch whose specialist comparison is known;
- :mod:`support.containers`: what an offline container image is built from.

A fixture defined here is used by importing it into the test module (pytest finds fixtures in
the module's namespace); an autouse one (``support.datasets.env``) then applies to that module.
The in-memory results client and the mock model server ship in the package
(:mod:`harness.testing`). ``tests/`` is on the import path through the pytest configuration
(``pythonpath`` in pyproject.toml).
"""
